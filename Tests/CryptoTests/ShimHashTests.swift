import Crypto
import Dispatch
import Testing
import TestSupport

/// The shim's SHA-2, HMAC and HKDF-Expand (on OpenSSL's block functions,
/// keyed state on the stack) against independent definitions and known
/// values, at the block boundaries where a hand-written HMAC goes wrong, and
/// from many threads at once.
@Suite struct ShimHashTests {
    /// RFC 2104 written out with the plain digest: H((K' ⊕ opad) ‖ H((K' ⊕ ipad) ‖ m)).
    static func referenceHMAC(_ hash: HashAlgorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
        let blockLength = hash == .sha256 ? 64 : 128
        var padded = key.count > blockLength ? hash.hash(key) : key
        padded += [UInt8](repeating: 0, count: blockLength - padded.count)
        let inner = hash.hash(padded.map { $0 ^ 0x36 } + data)
        return hash.hash(padded.map { $0 ^ 0x5c } + inner)
    }

    /// RFC 5869 §2.3 written out with `HMAC.authenticationCode`.
    static func referenceExpand(_ hash: HashAlgorithm, prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = HMAC.authenticationCode(hash, key: prk, data: block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(length))
    }

    static let keyLengths = [0, 1, 31, 32, 48, 63, 64, 65, 127, 128, 129, 200]
    static let dataLengths = [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000]

    @Test(arguments: HashAlgorithm.allCases)
    func hmacMatchesTheDefinitionAtBlockBoundaries(_ hash: HashAlgorithm) {
        for keyLength in Self.keyLengths {
            let key = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            for dataLength in Self.dataLengths {
                let data = (0..<dataLength).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
                #expect(HMAC.authenticationCode(hash, key: key, data: data) == Self.referenceHMAC(hash, key: key, data: data),
                        "\(hash) key \(keyLength) data \(dataLength)")
            }
        }
    }

    /// RFC 4231 §4.7: a 131-byte key, longer than every block, is hashed first.
    @Test(arguments: [
        (HashAlgorithm.sha256, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (.sha384, "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952"),
        (.sha512, "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"),
    ])
    func rfc4231Case6LongKey(_ hash: HashAlgorithm, _ expected: String) {
        let key = [UInt8](repeating: 0xaa, count: 131)
        let data = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(hexString(HMAC.authenticationCode(hash, key: key, data: data)) == expected)
    }

    @Test(arguments: HashAlgorithm.allCases)
    func hkdfExpandMatchesTheDefinition(_ hash: HashAlgorithm) throws {
        let prk = HKDF.extract(hash, salt: [1, 2, 3], inputKeyMaterial: Array(0..<40))
        for infoLength in [0, 1, 100] {
            let info = (0..<infoLength).map { UInt8(truncatingIfNeeded: $0 &+ 9) }
            for length in [0, 1, hash.byteCount - 1, hash.byteCount, hash.byteCount + 1, 3 * hash.byteCount + 5, 255 * hash.byteCount] {
                #expect(try HKDF.expand(hash, pseudoRandomKey: prk, info: info, length: length)
                        == Self.referenceExpand(hash, prk: prk, info: info, length: length), "\(hash) info \(infoLength) length \(length)")
            }
        }
    }

    /// A million "a": FIPS 180-2's long message, many blocks through one context.
    static let millionADigests: [HashAlgorithm: String] = [
        .sha256: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        .sha384: "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985",
        .sha512: "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
    ]

    @Test(arguments: HashAlgorithm.allCases)
    func millionA(_ hash: HashAlgorithm) throws {
        let expected = try #require(Self.millionADigests[hash])
        let message = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(hexString(hash.hash(message)) == expected)
        #expect(hexString(hash.hash(message[...])) == expected)
    }

    /// Every thread gets what one thread gets: the keyed states live on each
    /// call's stack, so nothing is shared to race on.
    @Test func concurrentCallsAgreeWithSequentialOnes() throws {
        let inputs = (0..<64).map { index in (0..<(index * 5)).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
        let expected = try inputs.map { input in
            (HashAlgorithm.sha256.hash(input), HMAC.authenticationCode(.sha384, key: input, data: input.reversed()),
             try HKDF.expand(.sha512, pseudoRandomKey: [UInt8](repeating: 7, count: 64), info: input, length: 100))
        }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let index = (round * 7 + thread) % inputs.count
                let input = inputs[index]
                #expect(HashAlgorithm.sha256.hash(input) == expected[index].0)
                #expect(HMAC.authenticationCode(.sha384, key: input, data: input.reversed()) == expected[index].1)
                #expect((try? HKDF.expand(.sha512, pseudoRandomKey: [UInt8](repeating: 7, count: 64), info: input, length: 100)) == expected[index].2)
            }
        }
    }
}
