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

    /// `SessionTranscriptBytes = #6.24(bstr .cbor SessionTranscript)`: the EMacKey salt input.
    public var taggedBytes: [UInt8] {
        CBOR.tagged(24, .bytes(encoded)).encoded()
    }
}
