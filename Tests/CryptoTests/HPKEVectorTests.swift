import Crypto
import Foundation
import Testing
import TestSupport

/// HPKE against published vectors: RFC 9180 A.3.1, Apple's "Verify with
/// Wallet" sample, and ISO 18013-7 Annex C captures.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found: set VERIDOC_VECTORS or place shared/vectors next to the package"))
struct HPKEVectorTests {
    @Test func rfc9180A31() throws {
        let list = try #require(try Vectors.json("rfc9180-a3.1-p256-sha256-aes128gcm-base.json") as? [[String: Any]])
        let vector = try #require(list.first)
        func field(_ name: String) throws -> [UInt8] { hex(try #require(vector[name] as? String)) }
        #expect(vector["mode"] as? Int == 0 && vector["kem_id"] as? Int == 16 && vector["kdf_id"] as? Int == 1 && vector["aead_id"] as? Int == 1)

        let skE = try HPKE.deriveKeyPair(inputKeyMaterial: field("ikmE"))
        let skR = try HPKE.deriveKeyPair(inputKeyMaterial: field("ikmR"))
        #expect(skE.publicKey.uncompressedPoint == (try field("pkEm")))
        #expect(skR.publicKey.uncompressedPoint == (try field("pkRm")))
        // The derived scalars are the published ones: the same scalar gives the same point.
        #expect(try PrivateKey(curve: .p256, scalar: field("skEm")).publicKey.uncompressedPoint == skE.publicKey.uncompressedPoint)
        #expect(try PrivateKey(curve: .p256, scalar: field("skRm")).publicKey.uncompressedPoint == skR.publicKey.uncompressedPoint)

        let info = try field("info")
        let setup = try HPKE.setupBaseSender(recipient: skR.publicKey, info: info, ephemeral: skE)
        let enc = setup.encapsulatedKey
        var sender = setup.context
        var receiver = try HPKE.setupBaseRecipient(encapsulatedKey: enc, recipient: skR, info: info)
        #expect(enc == (try field("enc")))
        for context in [sender, receiver] {
            #expect(context.sharedSecret == (try field("shared_secret")))
            #expect(context.keyScheduleContext == (try field("key_schedule_context")))
            #expect(context.secret == (try field("secret")))
            #expect(context.key == (try field("key")))
            #expect(context.baseNonce == (try field("base_nonce")))
            #expect(try context.exporterSecret == (try field("exporter_secret")))
        }

        let encryptions = try #require(vector["encryptions"] as? [[String: Any]])
        var bySequence: [UInt64: [String: Any]] = [:]
        for encryption in encryptions {
            bySequence[UInt64(try #require(encryption["sequence_number"] as? Int))] = encryption
        }
        #expect(bySequence.keys.sorted() == [0, 1, 2, 4, 255, 256])
        // Sender and receiver advance in lockstep; sequence numbers without a
        // published vector carry a dummy message.
        for sequence in UInt64(0)...256 {
            #expect(sender.sequenceNumber == sequence && receiver.sequenceNumber == sequence)
            let published = bySequence[sequence]
            let aad = published.map { hex($0["aad"] as! String) } ?? []
            let plaintext = published.map { hex($0["pt"] as! String) } ?? [UInt8(sequence & 0xff)]
            let ciphertext = try sender.seal(plaintext, aad: aad)
            if let published {
                #expect(hexString(ciphertext) == published["ct"] as? String, "seq \(sequence)")
            }
            #expect(try receiver.open(ciphertext, aad: aad) == plaintext, "seq \(sequence)")
        }

        let exports = try #require(vector["exports"] as? [[String: Any]])
        #expect(exports.count == 3)
        for export in exports {
            let context = hex(try #require(export["exporter_context"] as? String))
            let length = try #require(export["L"] as? Int)
            let expected = try #require(export["exported_value"] as? String)
            #expect(hexString(try sender.export(exporterContext: context, length: length)) == expected)
            #expect(hexString(try receiver.export(exporterContext: context, length: length)) == expected)
        }
    }

    // MARK: Apple "Verify with Wallet" sample (apple-formats.md §1.5)

    static let apple = "apple-verify-with-wallet-sample/"

    @Test func appleRecipientKeyAndHash() throws {
        let uncompressed = try Vectors.hex(Self.apple + "merchant_encryption_uncompressed_public_key.hex")
        #expect(hexString(sha256(uncompressed)) == "b2c00f06b2df645691174f1331ade35141f17e19b3021d07560b4a71fc61818c")
        let key = try PrivateKey(pem: Vectors.text(Self.apple + "merchant_encryption_key.pem"))
        #expect(key.type == .ec(.p256))
        #expect(key.publicKey.uncompressedPoint == uncompressed)
        let publicPEM = try PublicKey(pem: Vectors.text(Self.apple + "merchant_encryption_public_key.pem"))
        #expect(publicPEM.uncompressedPoint == uncompressed)
        let skR = try PrivateKey(curve: .p256, scalar: hex("b36638a4043a69915926515a5993acd53310b6f64f47ae4ee3f024853cc56111"))
        #expect(skR.publicKey.uncompressedPoint == uncompressed)
    }

    @Test func appleEnvelopeOpens() throws {
        let recipient = try PrivateKey(pem: Vectors.text(Self.apple + "merchant_encryption_key.pem"))
        let pkEm = try Vectors.hex(Self.apple + "pkem.hex")
        #expect(hexString(pkEm) == "04a302d29ad9476c921fa45af130509e27e5cce1f2271dbc9ca0eb65c4274096cccc3a838044735adbb15f54966ea9a725a78d7bcbecc5add7252ca4aeac0f86d7")
        let info = try Vectors.hex(Self.apple + "session_transcript.cbor.hex")
        #expect(hexString(sha256(info)) == (try Vectors.text(Self.apple + "info_hash.hex")).trimmingCharacters(in: .whitespacesAndNewlines))
        let envelope = try Vectors.hex(Self.apple + "hpke_envelope.hex")
        let data = try #require(Self.appleEnvelopeData(envelope))
        #expect(data.count == 6164)
        #expect(hexString(data.suffix(16)) == "88f4cb08845cb3f5f03349cc7bfa0dae")

        let context = try HPKE.setupBaseRecipient(encapsulatedKey: pkEm, recipient: recipient, info: info)
        #expect(hexString(context.sharedSecret) == "6cc7aa2f1a48467a31e418457d73a8195e97b9dd97f4e48a49718f27a260e566")
        #expect(hexString(context.keyScheduleContext) == "00b88d4e6d91759e65e87c470e8b9141113e9ad5f0c8ceefc1e088c82e69805007f37a6a304c55fe1e79835160d5b47178ae57844b4accc402162c5d6cc6e76389")
        #expect(hexString(context.secret) == "0c1c4f5aa6f33941bb33daac0e36960050e2a4fda3a7c871041ab9ab6f060761")
        #expect(hexString(context.key) == "04dbb79ae9f7453493630c0251a13397")
        #expect(hexString(context.baseNonce) == "e563782f370617838ee70a76")
        #expect(hexString(try recipient.sharedSecret(with: PublicKey(curve: .p256, uncompressedPoint: pkEm)))
            == "9aa388c49a4d30b13aeaf6aaedb71ad4e3454c7dd807e1852bfb018199c6461b")

        let plaintext = try HPKE.open(data, encapsulatedKey: pkEm, info: info, recipient: recipient)
        #expect(plaintext.count == 6148)
        #expect(plaintext == (try Vectors.hex(Self.apple + "plaintext_topics.hex")))

        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(data, encapsulatedKey: pkEm, info: info + [0], recipient: recipient)
        }
    }

    /// The bytes of the "data" entry: text "data" (64 64 61 74 61) then a
    /// bstr with a two-byte length (59 hi lo). Only what this test needs of CBOR.
    static func appleEnvelopeData(_ envelope: [UInt8]) -> [UInt8]? {
        let marker: [UInt8] = [0x64, 0x64, 0x61, 0x74, 0x61, 0x59]
        guard let start = (0...(envelope.count - marker.count - 2)).first(where: { Array(envelope[$0..<($0 + marker.count)]) == marker })
        else { return nil }
        let lengthAt = start + marker.count
        let length = Int(envelope[lengthAt]) << 8 | Int(envelope[lengthAt + 1])
        let body = lengthAt + 2
        guard body + length <= envelope.count else { return nil }
        return Array(envelope[body..<(body + length)])
    }

    // MARK: ISO 18013-7 Annex C (walt-id vectors)

    @Test func annexCDeterministicVectorOpens() throws {
        let folder = "iso18013-7-annex-c/walt-id-deterministic-001/"
        let vector = try #require(try Vectors.json(folder + "vector.json") as? [String: Any])
        let encoded = try #require(vector["encryptedResponseB64"] as? String)
        let response = try #require(base64URL(encoded))
        // ["dcapi", {"enc": bstr(65), "cipherText": bstr(37)}] with fixed-size heads.
        try #require(response.count == 129 && response[12] == 0x58 && response[13] == 65 && response[90] == 0x58)
        let enc = Array(response[14..<79])
        let ciphertext = Array(response[92...])
        let recipient = try PrivateKey(curve: .p256, scalar: hex(try #require(vector["recipientPrivateKeyHex"] as? String)))
        let info = try Vectors.hex(folder + "session_transcript.cbor.hex")
        let plaintext = try HPKE.open(ciphertext, encapsulatedKey: enc, info: info, recipient: recipient)
        #expect(plaintext == (try Vectors.hex(folder + "device_response_plaintext.hex")))
    }

    @Test func annexCCaptureWithPlaceholderKeyFails() throws {
        let folder = "iso18013-7-annex-c/multipaz-capture-real-001/"
        let vector = try #require(try Vectors.json(folder + "vector.json") as? [String: Any])
        let response = try Vectors.hex(folder + "encrypted_response.hex")
        // Same layout as above but cipherText has a two-byte length head (59 hi lo).
        try #require(response[12] == 0x58 && response[13] == 65 && response[90] == 0x59)
        let enc = Array(response[14..<79])
        let ciphertext = Array(response[93...])
        let recipient = try PrivateKey(curve: .p256, scalar: hex(try #require(vector["recipientPrivateKeyHex"] as? String)))
        let info = try Vectors.hex(folder + "session_transcript.cbor.hex")
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ciphertext, encapsulatedKey: enc, info: info, recipient: recipient)
        }
    }
}

private func base64URL(_ text: String) -> [UInt8]? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
    return Data(base64Encoded: standard).map(Array.init)
}
