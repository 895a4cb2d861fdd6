import CBOR
import Crypto

/// ISO/IEC 18013-7 Annex C: `EncryptionInfo = ["dcapi", {"nonce", "recipientPublicKey"}]`
/// as the server sent it in the request.
public struct AnnexCEncryptionInfo: Sendable {
    public let nonce: ArraySlice<UInt8>
    public let recipientPublicKey: PublicKey

    public init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }
        guard let parts = item.array, parts.count == 2, parts[0].text == "dcapi", parts[1].entries != nil else {
            throw .malformed("EncryptionInfo is [\"dcapi\", {nonce, recipientPublicKey}]")
        }
        nonce = try structure { () throws(CBORError) in try parts[1].require("nonce", in: "EncryptionInfo").requireBytes("EncryptionInfo.nonce") }
        let key = try structure { () throws(CBORError) in try parts[1].require("recipientPublicKey", in: "EncryptionInfo") }
        recipientPublicKey = try COSEKey.publicKey(from: key, context: "EncryptionInfo.recipientPublicKey")
    }

    public static func encode(nonce: [UInt8], recipient: PublicKey) -> [UInt8] {
        CBOR.array(["dcapi", .map([.init("nonce", .bytes(nonce)), .init("recipientPublicKey", COSEKey.encode(recipient))])]).encoded()
    }
}

/// `EncryptedResponse = ["dcapi", {"enc", "cipherText"}]`; the plaintext is a bare DeviceResponse.
public struct AnnexCEncryptedResponse: Sendable {
    public let encapsulatedKey: [UInt8]
    public let ciphertext: ArraySlice<UInt8>

    public init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }
        guard let parts = item.array, parts.count == 2, parts[1].entries != nil else {
            throw .malformed("EncryptedResponse is [\"dcapi\", {enc, cipherText}]")
        }
        guard parts[0].text == "dcapi" else { throw .unsupported("EncryptedResponse protocol is not dcapi") }
        encapsulatedKey = Array(try structure { () throws(CBORError) in try parts[1].require("enc", in: "EncryptedResponse").requireBytes("enc") })
        ciphertext = try structure { () throws(CBORError) in
            try parts[1].require("cipherText", in: "EncryptedResponse").requireBytes("cipherText")
        }
    }

    /// Seals a DeviceResponse for `recipient` (fixtures, load generation).
    public static func seal(deviceResponse: [UInt8], transcript: SessionTranscript, recipient: PublicKey) throws(CryptoError) -> [UInt8] {
        let sealed = try HPKE.seal(deviceResponse, info: transcript.encoded, recipient: recipient)
        return CBOR.array(["dcapi", .map([.init("enc", .bytes(sealed.encapsulatedKey)), .init("cipherText", .bytes(sealed.ciphertext))])]).encoded()
    }
}
