import Crypto
import Testing
import TestSupport

/// RFC 4231 §4.2 and §4.3.
@Suite struct HMACTests {
    static let case1Key = [UInt8](repeating: 0x0b, count: 20)
    static let case1Data = Array("Hi There".utf8)
    static let case2Key = Array("Jefe".utf8)
    static let case2Data = Array("what do ya want for nothing?".utf8)

    /// RFC 4231's test cases 1 and 2: their key and data.
    static let inputs: [Int: (key: [UInt8], data: [UInt8])] = [1: (case1Key, case1Data), 2: (case2Key, case2Data)]

    @Test(arguments: [
        (1, HashAlgorithm.sha256, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (1, .sha384, "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6"),
        (1, .sha512, "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"),
        (2, .sha256, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (2, .sha384, "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649"),
        (2, .sha512, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"),
    ])
    func rfc4231(_ rfcCase: Int, _ hash: HashAlgorithm, _ expected: String) throws {
        let (key, data) = try #require(Self.inputs[rfcCase])
        let mac = HMAC.authenticationCode(hash, key: key, data: data)
        #expect(hexString(mac) == expected)
        #expect(HMAC.isValid(mac, hash, key: key, data: data))
    }

    @Test func emptyKeyAndData() {
        #expect(hexString(HMAC.authenticationCode(.sha256, key: [], data: [UInt8]()))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func isValidRejectsWrongTruncatedOrEmptyMACs() {
        var mac = HMAC.authenticationCode(.sha256, key: Self.case2Key, data: Self.case2Data)
        #expect(!HMAC.isValid(Array(mac.dropLast()), .sha256, key: Self.case2Key, data: Self.case2Data))
        #expect(!HMAC.isValid([], .sha256, key: Self.case2Key, data: Self.case2Data))
        #expect(!HMAC.isValid(mac, .sha384, key: Self.case2Key, data: Self.case2Data))
        mac[31] ^= 1
        #expect(!HMAC.isValid(mac, .sha256, key: Self.case2Key, data: Self.case2Data))
    }
}
