/// The named checks. Their order, for running and reporting, is
/// `VerificationPolicy.checks`; each has a type of its own in this folder.
public enum CheckName: String, Sendable, CaseIterable, Comparable {
    case eventStructure = "event.structure"
    case eventTenant = "event.tenant"
    case payloadStructure = "payload.structure"
    case payloadTranscript = "payload.transcript"
    case payloadReader = "payload.reader"
    case decryptionKey = "decryption.key"
    case decryptionTranscript = "decryption.transcript"
    case decryptionOpen = "decryption.open"
    case responseDocuments = "response.documents"
    case responseRequest = "response.request"
    case issuerChain = "issuer.chain"
    case issuerCertificate = "issuer.certificate"
    case issuerSignature = "issuer.signature"
    case issuerAuthority = "issuer.authority"
    case msoStructure = "mso.structure"
    case msoDocType = "mso.doctype"
    case msoValidity = "mso.validity"
    case msoDigests = "mso.digests"
    case msoElementTypes = "mso.element_types"
    case deviceAuthentication = "device.authentication"
    case documentStatus = "document.status"
    case responseQuery = "response.query"
    case requestIssuedNonce = "request.issued_nonce"
    case requestAge = "request.age"
    case requestNonce = "request.nonce"

    /// Every check, in policy order.
    public static let order: [CheckName] = VerificationPolicy.checks.map { $0.name }
    /// The position in policy order, which is also the check's slot in a `CheckReport`.
    var rank: Int { Self.order.firstIndex(of: self)! }

    public static func < (lhs: CheckName, rhs: CheckName) -> Bool { lhs.rank < rhs.rank }

    /// Checks that must have passed for a `verified` verdict (the check type's
    /// `isRequiredForVerified`).
    public var isRequiredForVerified: Bool { VerificationPolicy.requiredForVerified[rank] }
}
