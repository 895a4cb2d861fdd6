import CBOR
import Crypto

/// `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication",
/// SessionTranscript, DocType, DeviceNameSpacesBytes])` (ISO 18013-5 §9.1.3.4).
/// The transcript and the namespaces are embedded as the exact bytes received
/// or built, so nothing is re-encoded.
public enum DeviceAuthentication {
    public static func bytes(transcript: SessionTranscript, docType: String, nameSpacesBytes: ArraySlice<UInt8>) -> [UInt8] {
        // The same bytes as encoding the CBOR values, written around the
        // embedded ones without copying them into values first.
        var authentication: [UInt8] = []
        authentication.reserveCapacity(32 + transcript.encoded.count + docType.utf8.count + nameSpacesBytes.count)
        CBOR.appendHead(major: 4, 4, to: &authentication)
        CBOR.text("DeviceAuthentication").encode(into: &authentication)
        authentication.append(contentsOf: transcript.encoded)
        CBOR.text(docType).encode(into: &authentication)
        authentication.append(contentsOf: nameSpacesBytes)
        var tagged: [UInt8] = []
        tagged.reserveCapacity(16 + authentication.count)
        CBOR.appendHead(major: 6, 24, to: &tagged)
        CBOR.appendHead(major: 2, UInt64(authentication.count), to: &tagged)
        tagged.append(contentsOf: authentication)
        return tagged
    }

    /// `EMacKey = HKDF-SHA256(ECDH(EReaderKey.priv, DeviceKey.pub), salt: SHA-256(SessionTranscriptBytes), info: "EMacKey", 32)` (§9.1.3.5).
    public static func macKey(readerKey: PrivateKey, deviceKey: PublicKey, transcript: SessionTranscript) throws(CryptoError) -> [UInt8] {
        let shared = try readerKey.sharedSecret(with: deviceKey)
        return try HKDF.deriveKey(.sha256, inputKeyMaterial: shared, salt: sha256(transcript.taggedBytes), info: Array("EMacKey".utf8), length: 32)
    }
}
