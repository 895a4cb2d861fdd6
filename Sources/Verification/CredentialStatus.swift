import Crypto
import MDoc
import Settings

/// What Veridoc found out about whether a document's issuer still stands by
/// it (its MSO's `status` member, ISO 18013-5 §12.3.6).
public enum CredentialStatus: Sendable, Equatable {
    /// Neither the MSO nor a certificate of the document's path names a list.
    case none
    /// The tenant's `status.mode` is off: nothing was fetched.
    case notChecked
    case valid
    case revoked
    case suspended
    /// The lists could not say: which step failed, never the URI or the index.
    case undetermined(StatusUndetermined)

    /// The outcome's word.
    public var word: String {
        switch self {
        case .none: "none"
        case .notChecked: "not_checked"
        case .valid: "valid"
        case .revoked: "revoked"
        case .suspended: "suspended"
        case .undetermined: "undetermined"
        }
    }

    /// The failed step of an undetermined status; nil otherwise.
    public var cause: String? {
        if case .undetermined(let cause) = self { return cause.step }
        return nil
    }

    /// Every word, in the order a result's states are summarised: the first
    /// that any document has is the result's.
    public static let words = ["revoked", "suspended", "undetermined", "valid", "not_checked", "none"]

    /// Both references of one MSO together: either saying revoked is revoked,
    /// then suspended; a list that could not be read leaves the answer
    /// undetermined even when the other says valid.
    public static func combining(_ answers: [CredentialStatus]) -> CredentialStatus {
        if answers.contains(.revoked) { return .revoked }
        if answers.contains(.suspended) { return .suspended }
        if let undetermined = answers.first(where: { if case .undetermined = $0 { true } else { false } }) { return undetermined }
        if answers.contains(.valid) { return .valid }
        return answers.first ?? .none
    }
}

/// Why a status is undetermined: the step that failed (a stable word the
/// reason detail and the metrics use) and a detail for people.
public struct StatusUndetermined: Error, Sendable, Equatable {
    public let step: String
    public let detail: String

    public init(step: String, detail: String) {
        self.step = step
        self.detail = detail
    }
}

/// One document's revocation references, to be resolved by the status
/// service: what its MSO names, the CRLs its certificates name, and who may
/// have signed the lists (the document's signer and the IACA its chain
/// ended at).
public struct StatusQuery: Sendable {
    /// The document's place in the response.
    public let document: Int
    public let reference: MSOStatus
    public let documentSigner: Certificate
    public let issuingAnchor: Certificate
    public let policy: TenantSettings.StatusPolicy
    /// The certificates of the document's path that name CRLs.
    public let certificateLists: [CertificateListReference]

    /// `path` is the validated path, signer first; nil: the signer and the
    /// anchor alone (Annex B has no intermediates), as a stored result keeps them.
    public init(document: Int, reference: MSOStatus, documentSigner: Certificate, issuingAnchor: Certificate, policy: TenantSettings.StatusPolicy,
                path: [Certificate]? = nil) {
        self.document = document
        self.reference = reference
        self.documentSigner = documentSigner
        self.issuingAnchor = issuingAnchor
        self.policy = policy
        certificateLists = CertificateListReference.onPath(path ?? (documentSigner == issuingAnchor ? [documentSigner] : [documentSigner, issuingAnchor]))
    }

    /// Whether it names anything to check.
    public var hasReferences: Bool { reference.hasReference || !certificateLists.isEmpty }
}

/// A status query with the status service's answer.
public struct ResolvedStatus: Sendable {
    public let query: StatusQuery
    public let answer: CredentialStatus
}
