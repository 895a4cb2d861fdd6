import Crypto
import Testing

@Suite struct KeyEncodingTests {
    @Test(arguments: Curve.allCases)
    func pkcs8PEMRoundTrip(_ curve: Curve) throws {
        let key = try PrivateKey.generate(curve: curve)
        let pem = try key.pkcs8PEM()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(pem.hasSuffix("-----END PRIVATE KEY-----\n"))
        let parsed = try PrivateKey(pem: pem)
        #expect(parsed.type == .ec(curve))
        #expect(parsed.publicKey.uncompressedPoint == key.publicKey.uncompressedPoint)
        // Same secret: a signature by the parsed key verifies under the original.
        let signature = try parsed.signature(for: [1, 2, 3], hash: .sha256)
        #expect(key.publicKey.isValidSignature(signature, for: [1, 2, 3], hash: .sha256))
    }

    @Test func ed25519PKCS8RoundTrip() throws {
        let key = try PrivateKey.generateEd25519()
        let parsed = try PrivateKey(pem: key.pkcs8PEM())
        #expect(parsed.type == .ed25519)
        #expect(parsed.publicKey.ed25519Raw == key.publicKey.ed25519Raw)
    }

    @Test func publicPEMRoundTrip() throws {
        for key in [try PrivateKey.generate(curve: .p384), try PrivateKey.generateEd25519()] {
            let pem = key.publicKey.pem
            #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
            let parsed = try PublicKey(pem: pem)
            #expect(parsed.spki == key.publicKey.spki)
            #expect(try PublicKey(spki: parsed.spki).type == key.type)
        }
    }

    /// A key made from a point has no EVP form until an encoding asks for one;
    /// that form must be the same key, and both origins must verify alike.
    @Test(arguments: Curve.allCases)
    func keyFromPointEncodesAndVerifiesLikeItsSource(_ curve: Curve) throws {
        let source = try PrivateKey.generate(curve: curve)
        let point = try #require(source.publicKey.uncompressedPoint)
        let fromPoint = try PublicKey(curve: curve, uncompressedPoint: point)
        #expect(fromPoint.spki == source.publicKey.spki)
        #expect(!fromPoint.spki.isEmpty)
        #expect(try PublicKey(pem: fromPoint.pem).uncompressedPoint == point)
        let signature = try source.signature(for: [9, 8, 7], hash: .sha256)
        #expect(fromPoint.isValidSignature(signature, for: [9, 8, 7], hash: .sha256))
        #expect(try PublicKey(spki: fromPoint.spki).isValidSignature(signature, for: [9, 8, 7], hash: .sha256))
        #expect(!fromPoint.isValidSignature(signature, for: [9, 8, 6], hash: .sha256))
        // ECDH against the point-made key equals ECDH against the source's own public half.
        let other = try PrivateKey.generate(curve: curve)
        #expect(try other.sharedSecret(with: fromPoint) == other.sharedSecret(with: source.publicKey))
        #expect(try other.sharedSecret(with: fromPoint) == source.sharedSecret(with: other.publicKey))
    }

    /// Without a password callback OpenSSL would block on a terminal prompt.
    @Test func encryptedPEMFailsWithoutPrompting() {
        let encrypted = """
            -----BEGIN ENCRYPTED PRIVATE KEY-----
            MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhpGMuVnKaVNQICCAAw
            DAYIKoZIhvcNAgkFADAdBglghkgBZQMEAQIEEKIwcZoOHYTqXWZa3A1U6LYEgZDn
            cEiroMSwJdECwKQdp9AH9JaL4kF62qf2+0Xy1P5mk3D663PLldwEfu/X2AmKiWtr
            ewy5WIWGLLWUboYo1+YKz6CNmJ47uWjo0+VNWchRro4AQZ+z4gxAKk3+l4QMiiH7
            H0C9wgn6YZRJqmBMYCMSkxwHk8mfQrkKO7OVaPAfOne2EMZjaPKLidRDi723ok0=
            -----END ENCRYPTED PRIVATE KEY-----
            """
        #expect(throws: CryptoError.self) { try PrivateKey(pem: encrypted) }
    }

    /// SEC 1 (`EC PRIVATE KEY`, as `openssl ecparam -genkey` writes it) is
    /// read as PKCS#8 is; encrypted under a legacy PEM header, it is refused.
    @Test func sec1PEMIsReadAndItsEncryptedFormRefused() throws {
        let sec1 = """
            -----BEGIN EC PRIVATE KEY-----
            MHcCAQEEIBqFirNRroku3IFnGzAXoWk97Gdo0k2qahkBYOx2q8hKoAoGCCqGSM49
            AwEHoUQDQgAE5eKNdUDHokZfcZhgsANyldkhYbyJEN8ns6L/6bOPA8wET0uicCpV
            RDh1cORDi8xNFAxGiTF4TcBrIIbVUo8Ezg==
            -----END EC PRIVATE KEY-----
            """
        let key = try PrivateKey(pem: sec1)
        #expect(key.type == .ec(.p256))
        #expect(try PrivateKey(pem: key.pkcs8PEM()).publicKey.uncompressedPoint == key.publicKey.uncompressedPoint)
        let encrypted = """
            -----BEGIN EC PRIVATE KEY-----
            Proc-Type: 4,ENCRYPTED
            DEK-Info: AES-128-CBC,AE0EA788C7399E476453C805EC66CFE7

            +5fNVLxIFBRgKpPUil4s5ASy8dom78MQMYYddu82mi0r2xzWsX/jkm2YmJMfZN06
            dDsha6IVDPAlsRzcyv0QN3M9mCs8B+TydsWiC1V/aqtZFAkg4uz5/NRUKUyNj5Xy
            szcbvWfRdrB14Ax8zmT3+VtZI4kmCQ+mgeInJbxjscw=
            -----END EC PRIVATE KEY-----
            """
        #expect(throws: CryptoError.self) { try PrivateKey(pem: encrypted) }
        // A public key where a private one belongs, and a PKCS#8 key labelled as SEC 1.
        #expect(throws: CryptoError.self) { try PrivateKey(pem: key.publicKey.pem) }
        #expect(throws: CryptoError.self) {
            try PrivateKey(pem: try PrivateKey.generateEd25519().pkcs8PEM().replacingOccurrences(of: "PRIVATE KEY", with: "EC PRIVATE KEY"))
        }
    }

    @Test func garbagePEMIsMalformed() {
        #expect(throws: CryptoError.self) { try PrivateKey(pem: "") }
        #expect(throws: CryptoError.self) { try PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        #expect(throws: CryptoError.self) { try PublicKey(pem: "not a key") }
    }
}
