import Crypto
import JSON

/// Compact JWS (RFC 7515 §7.1) signed with ES256: what Veridoc signs with a
/// P-256 key (ProximityReader tokens, OpenID4VP request objects). The
/// signature is the raw 64-byte r ‖ s, not DER (RFC 7518 §3.4).
public enum CompactJWS {
    /// `header` must name `"alg": "ES256"`; its members and the payload's
    /// bytes are signed as given.
    public static func signES256(header: JSONObject, payload: [UInt8], key: PrivateKey) throws(CryptoError) -> String {
        guard key.publicKey.curve == .p256 else { throw .invalidKey("ES256 signs with a P-256 key") }
        let signingInput = Base64.encodeURL(JSONValue.object(header).jsonBytes(keyOrder: .insertion)) + "." + Base64.encodeURL(payload)
        let signature = try key.signature(for: Array(signingInput.utf8), hash: .sha256)
        return signingInput + "." + Base64.encodeURL(signature)
    }
}
