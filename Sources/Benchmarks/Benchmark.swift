import Crypto
import Dispatch
import DemoKit
import Foundation
import MDoc
import TestIssuer
import Verification

/// In-process parts of `make bench`: the cost of the public-key primitives
/// (the crypto ceiling) and the corpus the pool stage (`PoolBenchmark`) runs.
public enum Benchmark {
    public struct Primitive: Sendable {
        public let name: String
        public let operationsPerSecond: Double
    }

    /// Runs `body` repeatedly for about `seconds`; operations per second.
    static func rate(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        var count = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed = 0.0
        repeat {
            for _ in 0..<16 { try body() }
            count += 16
            elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        } while elapsed < seconds
        return Double(count) / elapsed
    }

    public static func primitives(seconds: Double = 1) throws -> [Primitive] {
        let p256 = try PrivateKey.generate(curve: .p256)
        let peer = try PrivateKey.generate(curve: .p256).publicKey
        let p384 = try PrivateKey.generate(curve: .p384)
        let message = Array(repeating: UInt8(7), count: 512)
        let signature256 = try p256.signature(for: message, hash: .sha256)
        let signature384 = try p384.signature(for: message, hash: .sha384)
        let plaintext = Array(repeating: UInt8(1), count: 6 * 1024)
        let info = Array(repeating: UInt8(2), count: 200)
        let sealed = try HPKE.seal(plaintext, info: info, recipient: p256.publicKey)
        let table = try PrecomputedVerificationKey(p256.publicKey)
        let signerKey = try CertificateBuilder(subject: [("CN", "Bench document signer")], publicKey: p256.publicKey,
                                               notBefore: Date(), notAfter: Date() + 86_400).selfSigned(with: p256).publicKey()
        let cache = SignatureVerifierCache(threshold: 1, capacity: 1)
        return [
            Primitive(name: "ECDH P-256", operationsPerSecond: try rate(seconds: seconds) { _ = try p256.sharedSecret(with: peer) }),
            Primitive(name: "ECDSA P-256 verify", operationsPerSecond: rate(seconds: seconds) {
                precondition(p256.publicKey.isValidSignature(signature256, for: message, hash: .sha256))
            }),
            // The issuer signature of a document signer seen often (issue 27 §1):
            // u2·Q from the key's own table; through the cache with the key as a
            // certificate gives it.
            Primitive(name: "ECDSA P-256 verify, fixed-base table", operationsPerSecond: rate(seconds: seconds) {
                precondition(table.isValidSignature(signature256, for: message, hash: .sha256))
            }),
            Primitive(name: "ECDSA P-256 verify, SignatureVerifierCache hit", operationsPerSecond: rate(seconds: seconds) {
                precondition(cache.isValidSignature(signature256, for: message, hash: .sha256, key: signerKey))
            }),
            Primitive(name: "P-256 fixed-base table build", operationsPerSecond: try rate(seconds: seconds) {
                _ = try PrecomputedVerificationKey(p256.publicKey)
            }),
            Primitive(name: "ECDSA P-384 verify", operationsPerSecond: rate(seconds: seconds) {
                precondition(p384.publicKey.isValidSignature(signature384, for: message, hash: .sha384))
            }),
            Primitive(name: "HPKE open 6 KB", operationsPerSecond: try rate(seconds: seconds) {
                _ = try HPKE.open(sealed.ciphertext, encapsulatedKey: sealed.encapsulatedKey, info: info, recipient: p256)
            }),
        ]
    }

    /// A corpus of valid Apple in-app events (the common case) as Kafka (key, value) pairs, and its verifier;
    /// `repeatShare` of them present the credential of the event before again.
    public static func corpus(count: Int, seed: UInt64 = 6, repeatShare: Double = 0) throws -> (records: [(key: [UInt8]?, value: [UInt8])], verifier: Verifier) {
        var generator = LoadGenerator(factory: try TestIssuer.EventFactory(now: Date(), seed: seed), mix: .valid, seed: seed)
        generator.flowWeights = [(.appleWalletApp, 1)]
        generator.repeatShare = repeatShare
        var records: [(key: [UInt8]?, value: [UInt8])] = []
        for _ in 0..<count {
            let record = try generator.next()
            records.append((record.key, record.value))
        }
        return (records, try generator.factory.verifier())
    }

    /// Events like `corpus`'s, spread round-robin over `issuers` issuing
    /// authorities (each its own IACA and document signer) and `tenants`
    /// tenants (each its own merchant keys, all trusting every IACA): the
    /// per-event cost must not grow with either.
    public static func corpus(count: Int, issuers: Int, tenants: Int, seed: UInt64 = 7) throws
        -> (records: [(key: [UInt8]?, value: [UInt8])], verifier: Verifier)
    {
        precondition(issuers > 0 && tenants > 0)
        let now = Date()
        var random = TestIssuer.SeededRandom(seed: seed)
        let authorities = try (0..<issuers).map { try TestIssuer.Authority(now: now, name: "Bench Issuer \($0)") }
        let merchants = try (0..<tenants).map {
            try TestIssuer.Merchant(tenantID: "tenant-\($0)", merchantID: "merchant.com.example.bench\($0)")
        }
        var factories: [TestIssuer.EventFactory] = []
        for index in 0..<max(issuers, tenants) {
            let credential = TestIssuer.Credential.mobileDrivingLicence(now: now, using: &random)
            factories.append(TestIssuer.EventFactory(
                authority: authorities[index % issuers], merchant: merchants[index % tenants], holder: try TestIssuer.Holder(),
                credential: credential, now: now, seed: random.next()))
        }
        var options = TestIssuer.EventOptions()
        options.requestedElements = [
            RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "age_over_21", retention: .willNotStore),
            RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "family_name", retention: .mayStore(days: 30)),
        ]
        var records: [(key: [UInt8]?, value: [UInt8])] = []
        records.reserveCapacity(count)
        for sequence in 0..<count {
            let event = try factories[sequence % factories.count].event(.appleWalletApp, options: options)
            records.append((Array("session-\(sequence % 64)".utf8), event.json()))
        }
        let anchors = authorities.map(\.iaca)
        return (records, Verifier(directory: TenantDirectory(try merchants.map { try $0.tenant(trusting: anchors) })))
    }
}
