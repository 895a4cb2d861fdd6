import Crypto
import Testing
import TestSupport

/// McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 3, 4, 15 and 16.
@Suite struct AESGCMTests {
    static let key128 = hex("feffe9928665731c6d6a8f9467308308")
    static let key256 = key128 + key128
    static let nonce = hex("cafebabefacedbaddecaf888")
    static let plaintext = hex("""
        d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72\
        1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255
        """)
    static let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")

    @Test func testCase3AES128() throws {
        let sealed = try AESGCM.seal(Self.plaintext, key: Self.key128, nonce: Self.nonce)
        #expect(hexString(sealed) == """
            42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e\
            21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985\
            4d5c2af327cd64a62cf35abd2ba6fab4
            """)
        #expect(try AESGCM.open(sealed, key: Self.key128, nonce: Self.nonce) == Self.plaintext)
    }

    @Test func testCase4AES128WithAAD() throws {
        let plaintext = Array(Self.plaintext.prefix(60))
        let sealed = try AESGCM.seal(plaintext, key: Self.key128, nonce: Self.nonce, authenticating: Self.aad)
        #expect(hexString(sealed) == """
            42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e\
            21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091\
            5bc94fbc3221a5db94fae95ae7121a47
            """)
        #expect(try AESGCM.open(sealed, key: Self.key128, nonce: Self.nonce, authenticating: Self.aad) == plaintext)
    }

    @Test func testCase15AES256() throws {
        let sealed = try AESGCM.seal(Self.plaintext, key: Self.key256, nonce: Self.nonce)
        #expect(hexString(sealed) == """
            522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
            8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad\
            b094dac5d93471bdec1a502270e3cc6c
            """)
        #expect(try AESGCM.open(sealed, key: Self.key256, nonce: Self.nonce) == Self.plaintext)
    }

    @Test func testCase16AES256WithAAD() throws {
        let plaintext = Array(Self.plaintext.prefix(60))
        let sealed = try AESGCM.seal(plaintext, key: Self.key256, nonce: Self.nonce, authenticating: Self.aad)
        #expect(hexString(sealed.suffix(16)) == "76fc6ece0f4e1768cddf8853bb2d551b")
        // Opening from a slice exercises the zero-copy path with a non-zero start index.
        let framed = [0xaa] + sealed + [0xbb]
        #expect(try AESGCM.open(framed[1..<(framed.count - 1)], key: Self.key256, nonce: Self.nonce, authenticating: Self.aad) == plaintext)
    }

    @Test func emptyPlaintextIsJustATag() throws {
        let sealed = try AESGCM.seal([UInt8](), key: Self.key128, nonce: Self.nonce)
        #expect(sealed.count == 16)
        #expect(try AESGCM.open(sealed, key: Self.key128, nonce: Self.nonce).isEmpty)
    }

    @Test func tamperingFailsAuthentication() throws {
        let sealed = try AESGCM.seal(Self.plaintext, key: Self.key128, nonce: Self.nonce, authenticating: Self.aad)
        for index in [0, 30, sealed.count - 16, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(tampered, key: Self.key128, nonce: Self.nonce, authenticating: Self.aad)
            }
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: Self.key128, nonce: Self.nonce, authenticating: [])
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: hex("00000000000000000000000000000000"), nonce: Self.nonce, authenticating: Self.aad)
        }
        var otherNonce = Self.nonce
        otherNonce[11] ^= 1
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: Self.key128, nonce: otherNonce, authenticating: Self.aad)
        }
    }

    @Test(arguments: [0, 1, 15])
    func inputShorterThanTagFailsAuthentication(_ length: Int) {
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open([UInt8](repeating: 0, count: length), key: Self.key128, nonce: Self.nonce)
        }
    }

    @Test func badKeyAndNonceLengthsAreRejected() {
        #expect(throws: CryptoError.self) { try AESGCM.seal([1], key: [UInt8](repeating: 0, count: 24), nonce: Self.nonce) }
        #expect(throws: CryptoError.self) { try AESGCM.seal([1], key: Self.key128, nonce: [UInt8](repeating: 0, count: 16)) }
        #expect(throws: CryptoError.self) { try AESGCM.open([UInt8](repeating: 0, count: 32), key: [], nonce: Self.nonce) }
    }
}
