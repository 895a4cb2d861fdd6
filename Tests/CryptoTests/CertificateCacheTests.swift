import Foundation
import Testing
@testable import Crypto

/// The process-wide certificate cache keeps small certificates (every event
/// of a signer repeats its certificate) and never large ones (anyone may put
/// eight of them in an x5chain).
@Suite struct CertificateCacheTests {
    static func certificate(padding: Int) throws -> Certificate {
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("CN", "Cache \(UUID().uuidString)")], publicKey: key.publicKey,
                                         notBefore: Date(), notAfter: Date() + 86_400)
        // An unknown, non-critical extension: an OCTET STRING of `padding` bytes.
        if padding > 0 {
            let length = padding
            let head: [UInt8] = length < 0x100 ? [0x04, 0x81, UInt8(length)] : [0x04, 0x82, UInt8(length >> 8), UInt8(length & 0xff)]
            builder.extraExtensions = [(oid: "1.3.6.1.4.1.55555.9", critical: false, der: head + [UInt8](repeating: 0x41, count: length))]
        }
        return try builder.selfSigned(with: key)
    }

    @Test func smallCertificatesAreSharedLargeOnesParsedEachTime() throws {
        let small = try Self.certificate(padding: 0)
        #expect(small.der.count <= Certificate.maxCachedDER)
        let first = try Certificate.cached(der: small.der)
        let second = try Certificate.cached(der: small.der)
        #expect(first.handle.pointer == second.handle.pointer, "a small certificate comes from the cache")

        let large = try Self.certificate(padding: 8_000)
        #expect(large.der.count > Certificate.maxCachedDER)
        let parsed = try Certificate.cached(der: large.der)
        let again = try Certificate.cached(der: large.der)
        #expect(parsed.handle.pointer != again.handle.pointer, "a large certificate is never kept")
        #expect(parsed.der == large.der && again.der == large.der)
    }
}
