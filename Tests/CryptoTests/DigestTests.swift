import Crypto
import Testing
import TestSupport

@Suite struct DigestTests {
    @Test(arguments: [
        (HashAlgorithm.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (.sha384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
        (.sha512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    ])
    func abc(_ algorithm: HashAlgorithm, _ expected: String) {
        let digest = algorithm.hash(Array("abc".utf8))
        #expect(digest.count == algorithm.byteCount)
        #expect(hexString(digest) == expected)
    }

    @Test func emptyInput() {
        #expect(hexString(sha256([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func slicesAndNonContiguousCollectionsHashTheSameBytes() {
        let bytes = Array("xxabcxx".utf8)
        let expected = sha256(Array("abc".utf8))
        #expect(sha256(bytes[2..<5]) == expected)
        #expect(sha256("abc".utf8) == expected)
        #expect(sha256(Array("cba".utf8).reversed()) == expected)
    }

    @Test func rawValuesAreMSONames() {
        #expect(HashAlgorithm(rawValue: "SHA-256") == .sha256)
        #expect(HashAlgorithm(rawValue: "SHA-384") == .sha384)
        #expect(HashAlgorithm(rawValue: "SHA-512") == .sha512)
    }
}
