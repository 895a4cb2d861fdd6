import CBOR
import Crypto

/// `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication",
/// SessionTranscript, DocType, DeviceNameSpacesBytes])` (ISO 18013-5 §9.1.3.4).
/// The transcript and the namespaces are embedded as the exact bytes received
/// or built, so nothing is re-encoded.
public enum DeviceAuthentication {
    public static func bytes(transcript: SessionTranscript, docType: String, nameSpacesBytes: ArraySlice<UInt8>) -> [UInt8] {
        let authentication = CBOR.array([
            "DeviceAuthentication", .preEncoded(transcript.encoded), .text(docType), .preEncoded(Array(nameSpacesBytes)),
        ])
        return CBOR.tagged(24, .bytes(authentication.encoded())).encoded()
    }

    /// `EMacKey = HKDF-SHA256(ECDH(EReaderKey.priv, DeviceKey.pub), salt: SHA-256(SessionTranscriptBytes), info: "EMacKey", 32)` (§9.1.3.5).
    public static func macKey(readerKey: PrivateKey, deviceKey: PublicKey, transcript: SessionTranscript) throws(CryptoError) -> [UInt8] {
        let shared = try readerKey.sharedSecret(with: deviceKey)
        return try HKDF.deriveKey(.sha256, inputKeyMaterial: shared, salt: sha256(transcript.taggedBytes), info: Array("EMacKey".utf8), length: 32)
    }
}
