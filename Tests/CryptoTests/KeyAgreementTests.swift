import Crypto
import Testing

@Suite struct KeyAgreementTests {
    @Test(arguments: Curve.allCases)
    func ecdhIsSymmetric(_ curve: Curve) throws {
        let alice = try PrivateKey.generate(curve: curve)
        let bob = try PrivateKey.generate(curve: curve)
        let fromAlice = try alice.sharedSecret(with: bob.publicKey)
        #expect(fromAlice.count == curve.coordinateByteCount)
        #expect(fromAlice == (try bob.sharedSecret(with: alice.publicKey)))
    }

    /// The secret is X(d · Q): with d = 1 it is the peer's own X coordinate.
    @Test func secretIsThePaddedXCoordinate() throws {
        let one = try PrivateKey(curve: .p256, scalar: [UInt8](repeating: 0, count: 31) + [1])
        let peer = try PrivateKey.generate(curve: .p256).publicKey
        let point = try #require(peer.uncompressedPoint)
        #expect(try one.sharedSecret(with: peer) == Array(point[1...32]))
    }

    @Test func mismatchedCurvesAreInvalidKeys() throws {
        let p256 = try PrivateKey.generate(curve: .p256)
        let p384 = try PrivateKey.generate(curve: .p384)
        #expect {
            try p256.sharedSecret(with: p384.publicKey)
        } throws: { error in
            if case CryptoError.invalidKey = error { true } else { false }
        }
        #expect(throws: CryptoError.self) { try p256.sharedSecret(with: PrivateKey.generateEd25519().publicKey) }
        #expect {
            try PrivateKey.generateEd25519().sharedSecret(with: p256.publicKey)
        } throws: { error in
            if case CryptoError.unsupported = error { true } else { false }
        }
    }
}
