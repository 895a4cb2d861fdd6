import Crypto
import Dispatch
import Testing

/// Behaviour of the HPKE composition that needs no external vectors.
@Suite struct HPKETests {
    static let info = Array("veridoc hpke test".utf8)
    static let plaintext = Array("a DeviceResponse, say".utf8)

    @Test func sealThenOpen() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let (enc, ciphertext) = try HPKE.seal(Self.plaintext, info: Self.info, aad: [9], recipient: recipient.publicKey)
        #expect(enc.count == 65 && enc.first == 0x04)
        #expect(ciphertext.count == Self.plaintext.count + 16)
        #expect(try HPKE.open(ciphertext, encapsulatedKey: enc, info: Self.info, aad: [9], recipient: recipient) == Self.plaintext)
        // A fresh ephemeral key every time.
        let (otherEnc, _) = try HPKE.seal(Self.plaintext, info: Self.info, recipient: recipient.publicKey)
        #expect(otherEnc != enc)
    }

    @Test func wrongKeyInfoOrAADFailsAuthentication() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let (enc, ciphertext) = try HPKE.seal(Self.plaintext, info: Self.info, aad: [1], recipient: recipient.publicKey)
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ciphertext, encapsulatedKey: enc, info: Self.info, aad: [1], recipient: PrivateKey.generate(curve: .p256))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ciphertext, encapsulatedKey: enc, info: Self.info + [0], aad: [1], recipient: recipient)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ciphertext, encapsulatedKey: enc, info: Self.info, aad: [], recipient: recipient)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ciphertext.dropLast(), encapsulatedKey: enc, info: Self.info, aad: [1], recipient: recipient)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open([UInt8](), encapsulatedKey: enc, info: Self.info, aad: [1], recipient: recipient)
        }
    }

    @Test func malformedEncapsulatedKeysAreRejected() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let (enc, ciphertext) = try HPKE.seal(Self.plaintext, info: Self.info, recipient: recipient.publicKey)
        var offCurve = enc
        offCurve[64] ^= 0x01
        #expect(throws: CryptoError.pointNotOnCurve) {
            try HPKE.open(ciphertext, encapsulatedKey: offCurve, info: Self.info, recipient: recipient)
        }
        let compressed = [0x02 | (enc[64] & 1)] + Array(enc[1...32])
        for bad in [[], [0x00], Array(enc.dropLast()), enc + [0], compressed, [0x04] + [UInt8](repeating: 0, count: 64)] {
            #expect {
                try HPKE.open(ciphertext, encapsulatedKey: bad, info: Self.info, recipient: recipient)
            } throws: { error in
                switch error as? CryptoError {
                case .invalidKey, .pointNotOnCurve: true
                default: false
                }
            }
        }
    }

    @Test func onlyP256KeysAreSupported() throws {
        let p384 = try PrivateKey.generate(curve: .p384)
        let p256 = try PrivateKey.generate(curve: .p256)
        #expect(throws: CryptoError.unsupported("HPKE recipient key must be P-256")) {
            try HPKE.open([UInt8](repeating: 0, count: 32), encapsulatedKey: p256.publicKey.uncompressedPoint!, info: [], recipient: p384)
        }
        #expect(throws: CryptoError.self) { try HPKE.seal([1], info: [], recipient: p384.publicKey) }
        #expect(throws: CryptoError.self) { try HPKE.seal([1], info: [], recipient: PrivateKey.generateEd25519().publicKey) }
        #expect(throws: CryptoError.self) { try HPKE.seal([1], info: [], recipient: p256.publicKey, ephemeral: p384) }
    }

    @Test func sequenceAdvancesOnlyOnSuccess() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let setup = try HPKE.setupBaseSender(recipient: recipient.publicKey, info: Self.info)
        let enc = setup.encapsulatedKey
        var sender = setup.context
        var receiver = try HPKE.setupBaseRecipient(encapsulatedKey: enc, recipient: recipient, info: Self.info)
        let first = try sender.seal([1], aad: [])
        let second = try sender.seal([2], aad: [])
        #expect(sender.sequenceNumber == 2)
        #expect(throws: CryptoError.authenticationFailed) { try receiver.open(second, aad: []) }
        #expect(receiver.sequenceNumber == 0)
        #expect(try receiver.open(first, aad: []) == [1])
        #expect(try receiver.open(second, aad: []) == [2])
        #expect(try sender.export(exporterContext: [7], length: 48) == receiver.export(exporterContext: [7], length: 48))
    }

    @Test func deriveKeyPairIsDeterministic() throws {
        let ikm = [UInt8](repeating: 0x42, count: 32)
        let first = try HPKE.deriveKeyPair(inputKeyMaterial: ikm)
        #expect(first.publicKey.uncompressedPoint == (try HPKE.deriveKeyPair(inputKeyMaterial: ikm)).publicKey.uncompressedPoint)
        #expect(first.type == .ec(.p256))
    }

    /// Failures (a wrong tag, a point off the curve, a coordinate ≥ p) leave
    /// nothing behind for the next open on the same thread, and tampering is
    /// still caught after many successful opens.
    @Test func failuresDoNotPoisonLaterOpens() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let (enc, ciphertext) = try HPKE.seal(Self.plaintext, info: Self.info, recipient: recipient.publicKey)
        var tampered = ciphertext
        tampered[tampered.count - 1] ^= 0x80
        var offCurve = enc
        offCurve[64] ^= 0x01
        let beyondP = [0x04] + [UInt8](repeating: 0xff, count: 32) + enc[33...]
        for _ in 0..<50 {
            #expect(throws: CryptoError.authenticationFailed) {
                try HPKE.open(tampered, encapsulatedKey: enc, info: Self.info, recipient: recipient)
            }
            #expect(try HPKE.open(ciphertext, encapsulatedKey: enc, info: Self.info, recipient: recipient) == Self.plaintext)
            #expect(throws: CryptoError.pointNotOnCurve) {
                try HPKE.open(ciphertext, encapsulatedKey: offCurve, info: Self.info, recipient: recipient)
            }
            #expect(throws: CryptoError.pointNotOnCurve) {
                try HPKE.open(ciphertext, encapsulatedKey: beyondP, info: Self.info, recipient: recipient)
            }
            #expect(try HPKE.open(ciphertext, encapsulatedKey: enc, info: Self.info, recipient: recipient) == Self.plaintext)
        }
    }

    /// Opens on many threads at once, with failures interleaved, get exactly
    /// what a single thread gets.
    @Test func concurrentOpensAgreeWithSequentialOnes() throws {
        let recipient = try PrivateKey.generate(curve: .p256)
        let messages = (0..<16).map { index in [UInt8](repeating: UInt8(index), count: 100 * index) }
        let sealed = try messages.map { try HPKE.seal($0, info: Self.info + [UInt8($0.count & 0xff)], recipient: recipient.publicKey) }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<40 {
                let index = (round + thread) % messages.count
                let info = Self.info + [UInt8(messages[index].count & 0xff)]
                if (round + thread) % 3 == 0 {
                    var bad = sealed[index].ciphertext
                    bad[0] ^= 1
                    #expect(throws: CryptoError.authenticationFailed) {
                        try HPKE.open(bad, encapsulatedKey: sealed[index].encapsulatedKey, info: info, recipient: recipient)
                    }
                }
                #expect((try? HPKE.open(sealed[index].ciphertext, encapsulatedKey: sealed[index].encapsulatedKey, info: info, recipient: recipient)) == messages[index])
            }
        }
    }
}
