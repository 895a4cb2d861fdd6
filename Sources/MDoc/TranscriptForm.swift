import CBOR
import Crypto

/// What a received SessionTranscript says about the exchange it was made in,
/// read from its structure (ISO 18013-5 §9.1.5.1, ISO 18013-7 Annexes B and C,
/// Apple's PassKit handover). A transcript is the only thing that ties a
/// device's authentication to one relying party and one session, so a
/// transcript made for one kind of exchange must never be accepted in another.
public enum TranscriptForm: Sendable {
    /// `[DeviceEngagementBytes, EReaderKeyBytes, Handover]`: a proximity
    /// session (QR engagement with a `null` handover, or NFC). `readerKey`
    /// is EReaderKey, the public half of the reader's ephemeral key.
    case proximity(readerKey: PublicKey, handover: ProximityHandover)
    /// `[null, null, Handover]` with an OpenID4VP handover (ISO 18013-7
    /// Annex B, OpenID4VP 1.0 Annex B, and the pre-standard shapes the
    /// public vectors use): the verifier that made the request is named
    /// inside the handover's hashes, which Veridoc does not rebuild.
    case openID4VP
    /// `[null, null, ["AppleIdentityPresentment_1.0", …]]`: Apple's in-app
    /// flow, whose transcript Veridoc builds itself from the tenant's merchant.
    case appleIdentityPresentment
    /// `[null, null, ["dcapi", …]]`: ISO 18013-7 Annex C on the Digital
    /// Credentials API, whose transcript Veridoc builds from its own request.
    case digitalCredentialsAPI
    /// `[null, null, ["OpenID4VPDCAPIHandover", hash]]`: OpenID4VP over the
    /// Digital Credentials API, whose transcript the openid4vp-dc-api flow
    /// builds from the origin, the nonce and the response key.
    case openID4VPDigitalCredentialsAPI

    public enum ProximityHandover: String, Sendable {
        /// QR device engagement: ISO 18013-5 says the handover is `null`.
        case qr
        /// `[HandoverSelect, HandoverRequest / null]`, the NFC handover messages.
        case nfc
    }

    /// The flow-neutral name of the form, for details and outcomes.
    public var name: String {
        switch self {
        case .proximity(_, let handover): "ISO 18013-5 proximity (\(handover.rawValue) handover)"
        case .openID4VP: "OpenID4VP"
        case .appleIdentityPresentment: "Apple in-app (AppleIdentityPresentment_1.0)"
        case .digitalCredentialsAPI: "Digital Credentials API (dcapi)"
        case .openID4VPDigitalCredentialsAPI: "OpenID4VP over the Digital Credentials API (OpenID4VPDCAPIHandover)"
        }
    }

    /// Reads the form of `transcript`; throws `MDocError.malformed` for a
    /// transcript of no known form or with a broken part, naming the part.
    public static func of(_ transcript: SessionTranscript, limits: CBORDecoder.Limits = .default) throws(MDocError) -> TranscriptForm {
        try of(try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(transcript.encoded) }, limits: limits)
    }

    /// The form of a transcript already decoded (`item`, its array of three).
    public static func of(_ item: CBORItem, limits: CBORDecoder.Limits) throws(MDocError) -> TranscriptForm {
        guard let parts = item.array, parts.count == 3 else { throw .malformed("SessionTranscript is an array of 3") }
        let (engagement, readerKey, handover) = (parts[0], parts[1], parts[2])
        if engagement.isNull && readerKey.isNull {
            return try remoteForm(handover)
        }
        guard !engagement.isNull, !readerKey.isNull else {
            throw .malformed("SessionTranscript has one of DeviceEngagementBytes and EReaderKeyBytes without the other")
        }
        try checkDeviceEngagement(engagement, limits: limits)
        let key = try embeddedKey(readerKey, "EReaderKeyBytes", limits: limits)
        return .proximity(readerKey: key, handover: try proximityHandover(handover))
    }

    /// A remote presentation's handover: the first element names whose it is.
    private static func remoteForm(_ handover: CBORItem) throws(MDocError) -> TranscriptForm {
        guard let elements = handover.array, !elements.isEmpty else {
            // [null, null, null] (or a scalar) binds the device's answer to nothing at all.
            throw .malformed("SessionTranscript without DeviceEngagement has no handover array that names its session")
        }
        if let name = elements[0].text {
            // Lookalikes count as the real name: Veridoc builds these two
            // handovers itself, and a near copy is never an OpenID4VP one.
            if name.hasPrefix("AppleIdentityPresentment") { return .appleIdentityPresentment }
            if name.lowercased() == "dcapi" { return .digitalCredentialsAPI }
        }
        guard isOpenID4VPHandover(elements) else {
            throw .malformed("SessionTranscript without DeviceEngagement has a handover of no known OpenID4VP form")
        }
        // Every version of this handover (draft 24's too) hashes an origin, which Veridoc's own flow for it checks.
        if elements[0].text?.utf8.elementsEqual("OpenID4VPDCAPIHandover".utf8) == true { return .openID4VPDigitalCredentialsAPI }
        return .openID4VP
    }

    /// The OpenID4VP handovers in use, each naming its verifier through
    /// hashes (SHA-256, 32 bytes) or the strings themselves; anything else,
    /// an empty hash or name included, names nobody:
    /// - `["OpenID4VPHandover" / "OpenID4VPDCAPIHandover", hash]` (OpenID4VP 1.0 Annex B, and over the DC API);
    /// - `[clientIdHash, responseUriHash, nonce]` (ISO 18013-7 first edition, Annex B);
    /// - `[mdocGeneratedNonce, clientId, responseUri, nonce]`, all text (the pre-standard shape of the auth0 vectors).
    private static func isOpenID4VPHandover(_ elements: [CBORItem]) -> Bool {
        func isHash(_ item: CBORItem) -> Bool { item.bytes?.count == 32 }
        func isName(_ item: CBORItem) -> Bool { item.text.map { !$0.isEmpty } ?? false }
        switch elements.count {
        case 2:
            return ["OpenID4VPHandover", "OpenID4VPDCAPIHandover"].contains { elements[0].text?.utf8.elementsEqual($0.utf8) ?? false } && isHash(elements[1])
        case 3:
            return isHash(elements[0]) && isHash(elements[1]) && isName(elements[2])
        case 4:
            return elements.allSatisfy(isName)
        default:
            return false
        }
    }

    /// DeviceEngagementBytes = #6.24(bstr .cbor DeviceEngagement), where
    /// DeviceEngagement = {0: version, 1: Security = [cipherSuite, EDeviceKeyBytes], …}.
    private static func checkDeviceEngagement(_ item: CBORItem, limits: CBORDecoder.Limits) throws(MDocError) {
        let engagement = try embedded(item, "DeviceEngagementBytes", limits: limits)
        guard engagement.entries != nil else { throw .malformed("DeviceEngagement is not a map") }
        guard engagement[label: 0]?.text != nil else { throw .malformed("DeviceEngagement has no version (key 0)") }
        guard let security = engagement[label: 1]?.array, security.count >= 2, security[0].int != nil else {
            throw .malformed("DeviceEngagement has no Security [cipherSuite, EDeviceKeyBytes] (key 1)")
        }
        _ = try embeddedKey(security[1], "EDeviceKeyBytes", limits: limits)
    }

    /// `null` (QR), or the NFC `[HandoverSelect bstr, HandoverRequest bstr / null]`.
    private static func proximityHandover(_ item: CBORItem) throws(MDocError) -> ProximityHandover {
        if item.isNull { return .qr }
        guard let messages = item.array, messages.count == 2, messages[0].bytes != nil, messages[1].bytes != nil || messages[1].isNull else {
            throw .malformed("proximity Handover is neither null (QR) nor [HandoverSelect, HandoverRequest / null] (NFC)")
        }
        return .nfc
    }

    private static func embeddedKey(_ item: CBORItem, _ name: String, limits: CBORDecoder.Limits) throws(MDocError) -> PublicKey {
        let key = try embedded(item, name, limits: limits)
        let publicKey = try COSEKey.publicKey(from: key, context: name)
        guard publicKey.curve != nil else { throw .unsupported("\(name): not an EC key") }
        return publicKey
    }

    /// The item inside `#6.24(bstr)`; anything else is malformed.
    private static func embedded(_ item: CBORItem, _ name: String, limits: CBORDecoder.Limits) throws(MDocError) -> CBORItem {
        guard item.tagged?.tag == 24, item.tagged?.item.bytes != nil else { throw .malformed("\(name) is not #6.24(bstr)") }
        return try structure { () throws(CBORError) in try item.decodeEmbedded(name, limits: limits) }
    }
}
