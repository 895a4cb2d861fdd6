import Dispatch
import Testing
@testable import Crypto

/// The cache of fixed-base tables: built on a key's `threshold`-th sighting,
/// never more than `capacity`, the least recently used evicted, the same
/// answers with and without a table.
@Suite struct SignatureVerifierCacheTests {
    static let message = Array("issuerAuth payload".utf8)

    struct Signer {
        let key: PrivateKey
        let signature: [UInt8]

        init(curve: Curve = .p256) throws {
            key = try PrivateKey.generate(curve: curve)
            signature = try key.signature(for: SignatureVerifierCacheTests.message, hash: curve == .p256 ? .sha256 : .sha384)
        }

        /// A valid and an invalid verification through `cache`; both must answer right.
        func check(_ cache: SignatureVerifierCache) {
            let hash: HashAlgorithm = key.publicKey.curve == .p256 ? .sha256 : .sha384
            #expect(cache.isValidSignature(signature, for: message, hash: hash, key: key.publicKey))
            var wrong = signature
            wrong[10] ^= 1
            #expect(!cache.isValidSignature(wrong, for: message, hash: hash, key: key.publicKey))
        }
    }

    @Test func aTableIsBuiltOnTheThresholdthSighting() throws {
        let cache = SignatureVerifierCache(threshold: 5, capacity: 2)
        let signer = try Signer()
        signer.check(cache)
        signer.check(cache)
        #expect(cache.statistics.tables == 0)
        #expect(cache.statistics.trackedKeys == 1)
        signer.check(cache) // the fifth sighting builds, the sixth uses the table
        #expect(cache.statistics == .init(tables: 1, trackedKeys: 0, builds: 1, buildFailures: 0, evictions: 0))
        #expect(cache.statistics.byteCount == PrecomputedVerificationKey.approximateByteCount)
        signer.check(cache)
        #expect(cache.statistics.builds == 1, "kept, not rebuilt")
    }

    @Test func evictsTheLeastRecentlyUsedAndStaysBounded() throws {
        let cache = SignatureVerifierCache(threshold: 1, capacity: 2)
        let (a, b, c) = try (Signer(), Signer(), Signer())
        a.check(cache)
        b.check(cache)
        a.check(cache) // b is now the least recently used
        c.check(cache)
        #expect(cache.statistics.tables == 2)
        #expect(cache.statistics.evictions == 1)
        #expect(cache.statistics.builds == 3)
        a.check(cache)
        #expect(cache.statistics.builds == 3, "a was kept")
        b.check(cache)
        #expect(cache.statistics.builds == 4, "b was evicted, so it is built again")
        #expect(cache.statistics.tables == 2)
    }

    @Test func otherCurvesAndKeyTypesTakeTheOrdinaryPath() throws {
        let cache = SignatureVerifierCache(threshold: 1, capacity: 2)
        for signer in try [Signer(curve: .p384), Signer(curve: .p521)] {
            signer.check(cache)
            signer.check(cache)
        }
        let ed25519 = try PrivateKey.generateEd25519()
        let signature = try ed25519.signature(for: Self.message, hash: .sha256)
        #expect(cache.isValidSignature(signature, for: Self.message, hash: .sha256, key: ed25519.publicKey))
        #expect(cache.statistics == .init())
    }

    @Test func countsOnlyABoundedNumberOfKeys() throws {
        let cache = SignatureVerifierCache(threshold: 100, capacity: 2, trackedKeyLimit: 4)
        for _ in 0..<10 {
            try Signer().check(cache)
            #expect(cache.statistics.trackedKeys <= 4)
        }
        #expect(cache.statistics.tables == 0)
    }

    @Test func capacityZeroNeverBuilds() throws {
        let cache = SignatureVerifierCache(threshold: 1, capacity: 0)
        let signer = try Signer()
        for _ in 0..<3 { signer.check(cache) }
        #expect(cache.statistics == .init())
    }

    /// Same answers with and without a table, for valid, corrupted and foreign signatures.
    @Test func answersAreTheSameWithAndWithoutATable() throws {
        let without = SignatureVerifierCache(threshold: 1, capacity: 0)
        let with = SignatureVerifierCache(threshold: 1, capacity: 4)
        let signers = try (0..<3).map { _ in try Signer() }
        for signer in signers {
            var signatures = [signer.signature] + signers.map(\.signature)
            for index in [0, 31, 32, 63] {
                var corrupted = signer.signature
                corrupted[index] ^= 0x80
                signatures.append(corrupted)
            }
            for signature in signatures {
                for data in [Self.message, Self.message + [1], []] {
                    let plain = without.isValidSignature(signature, for: data, hash: .sha256, key: signer.key.publicKey)
                    #expect(with.isValidSignature(signature, for: data, hash: .sha256, key: signer.key.publicKey) == plain)
                    #expect(signer.key.publicKey.isValidSignature(signature, for: data, hash: .sha256) == plain)
                }
            }
        }
        #expect(with.statistics.tables == 3)
    }

    /// Many threads on few keys: each built once at most per eviction, every answer right.
    @Test func concurrentVerificationsBuildOnceAndAnswerRight() throws {
        let cache = SignatureVerifierCache(threshold: 3, capacity: 2)
        let signers = try (0..<3).map { _ in try Signer() }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<60 {
                signers[(thread + round) % signers.count].check(cache)
            }
        }
        let statistics = cache.statistics
        #expect(statistics.tables == 2)
        #expect(statistics.builds >= 3 && statistics.builds == statistics.tables + statistics.evictions)
        #expect(statistics.buildFailures == 0)
    }
}
