import CBOR
import Crypto

/// The SessionTranscript a response is bound to (ISO 18013-5 §9.1.5.1): the
/// HPKE `info` of both envelopes and the first thing DeviceAuthentication signs.
/// Held as its exact CBOR bytes, because every use hashes or embeds those bytes.
public struct SessionTranscript: Sendable, Equatable {
    /// The encoded `SessionTranscript` array.
    public let encoded: [UInt8]

    /// A transcript received as bytes (ISO proximity, ProximityReader raw data):
    /// used verbatim, only checked to be one CBOR array of three items.
    public init(received bytes: [UInt8], limits: CBORDecoder.Limits = .default) throws(MDocError) {
        let item = try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }
        // Some callers hand over SessionTranscriptBytes (#6.24 wrapped); unwrap it.
        let transcript = item.tagged?.tag == 24 ? try structure { () throws(CBORError) in try item.decodeEmbedded("SessionTranscriptBytes", limits: limits) } : item
        guard transcript.array?.count == 3 else { throw .malformed("SessionTranscript is an array of 3") }
        encoded = Array(transcript.encoded)
    }

    init(built: CBOR) {
        encoded = built.encoded()
    }

    /// Apple in-app (PassKit): `[null, null, ["AppleIdentityPresentment_1.0", nonce, merchantId, teamId, pkRHash]]`.
    public static func appleWalletApp(nonce: [UInt8], merchantID: String, teamID: String, recipientKeyHash: [UInt8]) -> SessionTranscript {
        SessionTranscript(built: [nil, nil, ["AppleIdentityPresentment_1.0", .bytes(nonce), .text(merchantID), .text(teamID), .bytes(recipientKeyHash)]])
    }

    /// ISO/IEC 18013-7 Annex C (`org-iso-mdoc` over the Digital Credentials API):
    /// `[null, null, ["dcapi", SHA-256(CBOR([encryptionInfo, origin]))]]`, with
    /// `encryptionInfo` the base64url string exactly as the server sent it.
    public static func digitalCredentialsAPI(encryptionInfo: String, origin: String) -> SessionTranscript {
        let dcapiInfo = CBOR.array([.text(encryptionInfo), .text(origin)]).encoded()
        return SessionTranscript(built: [nil, nil, ["dcapi", .bytes(sha256(dcapiInfo))]])
    }

    /// OpenID4VP 1.0 over the Digital Credentials API (Appendix B.2.6.2):
    /// `[null, null, ["OpenID4VPDCAPIHandover", SHA-256(CBOR([origin, nonce, jwkThumbprint]))]]`,
    /// with the origin as the browser reported it (no `origin:` prefix) and
    /// the RFC 7638 thumbprint of the key the response was encrypted to, or
    /// null for an unencrypted (`dc_api`) response.
    public static func openID4VPDigitalCredentialsAPI(origin: String, nonce: String, jwkThumbprint: [UInt8]?) -> SessionTranscript {
        openID4VP(handover: "OpenID4VPDCAPIHandover", hashing: [.text(origin), .text(nonce), jwkThumbprint.map(CBOR.bytes) ?? nil])
    }

    /// An OpenID4VP handover of any version: `[null, null, [name, SHA-256(CBOR(info))]]`.
    /// The versions differ only in the name and in what `info` holds (1.0
    /// redirect: client_id, nonce, thumbprint, response_uri; the draft-24 DC
    /// API: origin, client_id, nonce).
    public static func openID4VP(handover name: String, hashing info: [CBOR]) -> SessionTranscript {
        SessionTranscript(built: [nil, nil, [.text(name), .bytes(sha256(CBOR.array(info).encoded()))]])
    }

    /// `SessionTranscriptBytes = #6.24(bstr .cbor SessionTranscript)`: the EMacKey salt input.
    public var taggedBytes: [UInt8] {
        CBOR.tagged(24, .bytes(encoded)).encoded()
    }
}
