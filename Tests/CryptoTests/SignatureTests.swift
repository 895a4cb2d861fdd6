import Crypto
import Testing
import TestSupport

@Suite struct SignatureTests {
    static let message = Array("Veridoc signs and verifies COSE payloads".utf8)

    @Test(arguments: [(Curve.p256, HashAlgorithm.sha256), (.p384, .sha384), (.p521, .sha512), (.p256, .sha512)])
    func ecdsaRoundTrip(_ curve: Curve, _ hash: HashAlgorithm) throws {
        let key = try PrivateKey.generate(curve: curve)
        let signature = try key.signature(for: Self.message, hash: hash)
        #expect(signature.count == 2 * curve.coordinateByteCount)
        #expect(key.publicKey.isValidSignature(signature, for: Self.message, hash: hash))
        // The verifier must use the caller's hash, not guess one.
        let otherHash: HashAlgorithm = hash == .sha256 ? .sha384 : .sha256
        #expect(!key.publicKey.isValidSignature(signature, for: Self.message, hash: otherHash))
        try expectRejectsCorruptions(of: signature, by: key.publicKey, other: PrivateKey.generate(curve: curve).publicKey, hash: hash)
    }

    @Test func ed25519RoundTrip() throws {
        let key = try PrivateKey.generateEd25519()
        let signature = try key.signature(for: Self.message, hash: .sha256)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: Self.message, hash: .sha256))
        // EdDSA carries its own hash; the argument is ignored.
        #expect(key.publicKey.isValidSignature(signature, for: Self.message, hash: .sha512))
        try expectRejectsCorruptions(of: signature, by: key.publicKey, other: PrivateKey.generateEd25519().publicKey, hash: .sha256)
        let raw = try #require(key.publicKey.ed25519Raw)
        #expect(try PublicKey(ed25519: raw).isValidSignature(signature, for: Self.message, hash: .sha256))
    }

    @Test func emptyMessageAndSliceMessage() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let empty = try key.signature(for: [UInt8](), hash: .sha256)
        #expect(key.publicKey.isValidSignature(empty, for: [UInt8](), hash: .sha256))
        let framed = [0xff] + Self.message + [0xff]
        let signature = try key.signature(for: framed[1..<(framed.count - 1)], hash: .sha256)
        #expect(key.publicKey.isValidSignature(signature, for: Self.message, hash: .sha256))
    }

    /// RFC 6979 A.2.5, P-256 with SHA-256, message "sample": a fixed known answer.
    @Test func rfc6979KnownSignatureVerifies() throws {
        let publicKey = try PublicKey(
            curve: .p256,
            x: hex("60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"),
            y: hex("7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299"))
        let signature = hex("""
            efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716\
            f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8
            """)
        #expect(publicKey.isValidSignature(signature, for: Array("sample".utf8), hash: .sha256))
        #expect(!publicKey.isValidSignature(signature, for: Array("test".utf8), hash: .sha256))
        let privateKey = try PrivateKey(curve: .p256, scalar: hex("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"))
        #expect(privateKey.publicKey.uncompressedPoint == publicKey.uncompressedPoint)
    }

    @Test func zeroAndOutOfRangeComponentsAreInvalid() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let signature = try key.signature(for: Self.message, hash: .sha256)
        let zero = [UInt8](repeating: 0, count: 32)
        let ones = [UInt8](repeating: 0xff, count: 32)
        for candidate in [zero + signature.suffix(32), signature.prefix(32) + zero, ones + ones, ones + signature.suffix(32)] {
            #expect(!key.publicKey.isValidSignature(candidate, for: Self.message, hash: .sha256))
        }
    }

    /// Rejections (which may leave OpenSSL errors queued) and acceptances
    /// alternate on one thread without either changing the other's answer.
    @Test func rejectionsDoNotAffectLaterVerifications() throws {
        let key = try PrivateKey.generate(curve: .p256)
        let signature = try key.signature(for: Self.message, hash: .sha256)
        let ones = [UInt8](repeating: 0xff, count: 32)
        var flipped = signature
        flipped[5] ^= 1
        let offCurve = try PrivateKey.generate(curve: .p256).publicKey.uncompressedPoint!
        for _ in 0..<50 {
            #expect(!key.publicKey.isValidSignature(ones + ones, for: Self.message, hash: .sha256))
            #expect(key.publicKey.isValidSignature(signature, for: Self.message, hash: .sha256))
            #expect(!key.publicKey.isValidSignature(flipped, for: Self.message, hash: .sha256))
            #expect(throws: CryptoError.pointNotOnCurve) {
                try PublicKey(curve: .p256, uncompressedPoint: Array(offCurve.dropLast()) + [offCurve.last! ^ 1])
            }
            #expect(key.publicKey.isValidSignature(signature, for: Self.message[...], hash: .sha256))
        }
    }

    private func expectRejectsCorruptions(of signature: [UInt8], by key: PublicKey, other: PublicKey, hash: HashAlgorithm) {
        #expect(!other.isValidSignature(signature, for: Self.message, hash: hash), "wrong key")
        var flipped = signature
        flipped[flipped.count / 3] ^= 0x04
        #expect(!key.isValidSignature(flipped, for: Self.message, hash: hash), "flipped signature bit")
        var message = Self.message
        message[0] ^= 0x01
        #expect(!key.isValidSignature(signature, for: message, hash: hash), "flipped message bit")
        #expect(!key.isValidSignature(Array(signature.dropLast()), for: Self.message, hash: hash), "short")
        #expect(!key.isValidSignature(signature + [0], for: Self.message, hash: hash), "long")
        #expect(!key.isValidSignature([], for: Self.message, hash: hash), "empty")
        #expect(!key.isValidSignature([UInt8](repeating: 0, count: signature.count), for: Self.message, hash: hash), "all zero")
        #expect(!key.isValidSignature([UInt8](repeating: 0xff, count: 1 << 16), for: Self.message, hash: hash), "huge")
    }
}
