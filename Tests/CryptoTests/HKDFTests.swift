import Crypto
import Testing
import TestSupport

/// RFC 5869 Appendix A, SHA-256 cases.
@Suite struct HKDFTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int
        let prk: String, okm: String
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "A.1", ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c), info: Array(0xf0...0xf9), length: 42,
             prk: "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
             okm: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        Case(name: "A.2", ikm: Array(0x00...0x4f), salt: Array(0x60...0xaf), info: Array(0xb0...0xff), length: 82,
             prk: "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
             okm: "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
        Case(name: "A.3", ikm: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], length: 42,
             prk: "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
             okm: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ]

    @Test(arguments: cases)
    func rfc5869(_ vector: Case) throws {
        let prk = HKDF.extract(.sha256, salt: vector.salt, inputKeyMaterial: vector.ikm)
        #expect(hexString(prk) == vector.prk)
        let okm = try HKDF.expand(.sha256, pseudoRandomKey: prk, info: vector.info, length: vector.length)
        #expect(hexString(okm) == vector.okm)
        let derived = try HKDF.deriveKey(.sha256, inputKeyMaterial: vector.ikm, salt: vector.salt, info: vector.info, length: vector.length)
        #expect(derived == okm)
    }

    @Test func outputLengthBounds() throws {
        let prk = HKDF.extract(.sha256, salt: [], inputKeyMaterial: [1, 2, 3])
        #expect(try HKDF.expand(.sha256, pseudoRandomKey: prk, info: [], length: 0).isEmpty)
        #expect(try HKDF.expand(.sha256, pseudoRandomKey: prk, info: [], length: 255 * 32).count == 255 * 32)
        #expect(throws: CryptoError.self) { try HKDF.expand(.sha256, pseudoRandomKey: prk, info: [], length: 255 * 32 + 1) }
        #expect(throws: CryptoError.self) { try HKDF.expand(.sha256, pseudoRandomKey: prk, info: [], length: -1) }
        #expect(throws: CryptoError.self) { try HKDF.expand(.sha256, pseudoRandomKey: [1, 2], info: [], length: 16) }
    }
}
