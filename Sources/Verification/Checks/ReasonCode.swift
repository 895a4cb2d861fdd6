/// The closed, stable set of reason codes (Schemas/reason-codes.md). Reasons
/// are reported in the order the policy's checks declare them.
public enum ReasonCode: String, Sendable, CaseIterable, Comparable {
    case eventInvalid = "event.invalid"
    case eventUnknownTenant = "event.unknown_tenant"
    case payloadMalformed = "payload.malformed"
    case payloadUnsupported = "payload.unsupported"
    case responseWalletError = "response.wallet_error"
    case transcriptFlowMismatch = "payload.transcript_flow_mismatch"
    case readerKeyMismatch = "payload.reader_key_mismatch"
    case readerUnauthenticated = "payload.reader_unauthenticated"
    case decryptionUnknownKey = "decryption.unknown_key"
    case decryptionTranscriptMismatch = "decryption.transcript_mismatch"
    case decryptionFailed = "decryption.failed"
    case responseNoDocuments = "response.no_documents"
    case responseDoctypeNotRequested = "response.doctype_not_requested"
    case issuerUntrusted = "issuer.untrusted"
    case issuerCertificateInvalid = "issuer.certificate_invalid"
    case issuerSignatureInvalid = "issuer.signature_invalid"
    case issuerDoctypeNotAuthorized = "issuer.doctype_not_authorized"
    case issuerSignerCountryMismatch = "issuer.signer_country_mismatch"
    case issuerIssuingCountryMismatch = "issuer.issuing_country_mismatch"
    case issuerIssuingJurisdictionMismatch = "issuer.issuing_jurisdiction_mismatch"
    case msoMalformed = "mso.malformed"
    case msoDoctypeMismatch = "mso.doctype_mismatch"
    case msoNotYetValid = "mso.not_yet_valid"
    case msoExpired = "mso.expired"
    case msoDigestMismatch = "mso.digest_mismatch"
    case msoElementTypeMismatch = "mso.element_type_mismatch"
    case deviceSignatureInvalid = "device.signature_invalid"
    case deviceMacUnbound = "device.mac_unbound"
    case statusRevoked = "status.revoked"
    case statusSuspended = "status.suspended"
    case statusUndetermined = "status.undetermined"
    case responseElementNotRequested = "response.element_not_requested"
    case responseElementMissing = "response.element_missing"
    case requestNonceUnknown = "request.nonce_unknown"
    case requestExpired = "request.expired"
    case requestNonceReused = "request.nonce_reused"

    /// Every code, in report order.
    public static let order: [ReasonCode] = VerificationPolicy.reasonOrder
    /// The position in report order, which is also the code's slot in a `CheckReport`.
    var rank: Int { Self.order.firstIndex(of: self)! }

    public static func < (lhs: ReasonCode, rhs: ReasonCode) -> Bool { lhs.rank < rhs.rank }
}
