/// The closed, stable set of reason codes (Schemas/reason-codes.md). The case
/// order is the order in which reasons are reported.
public enum ReasonCode: String, Sendable, CaseIterable, Comparable {
    case eventInvalid = "event.invalid"
    case eventUnknownTenant = "event.unknown_tenant"
    case payloadMalformed = "payload.malformed"
    case payloadUnsupported = "payload.unsupported"
    case decryptionUnknownKey = "decryption.unknown_key"
    case decryptionTranscriptMismatch = "decryption.transcript_mismatch"
    case decryptionFailed = "decryption.failed"
    case responseNoDocuments = "response.no_documents"
    case issuerUntrusted = "issuer.untrusted"
    case issuerCertificateInvalid = "issuer.certificate_invalid"
    case issuerSignatureInvalid = "issuer.signature_invalid"
    case msoMalformed = "mso.malformed"
    case msoDoctypeMismatch = "mso.doctype_mismatch"
    case msoNotYetValid = "mso.not_yet_valid"
    case msoExpired = "mso.expired"
    case msoDigestMismatch = "mso.digest_mismatch"
    case deviceSignatureInvalid = "device.signature_invalid"
    case requestExpired = "request.expired"
    case requestNonceReused = "request.nonce_reused"

    /// `allCases` is built anew on every use; the order is needed on every comparison.
    private static let order = allCases
    private var rank: Int { Self.order.firstIndex(of: self)! }

    public static func < (lhs: ReasonCode, rhs: ReasonCode) -> Bool { lhs.rank < rhs.rank }
}

/// The named checks, in the order they run and are reported.
public enum CheckName: String, Sendable, CaseIterable, Comparable {
    case eventStructure = "event.structure"
    case eventTenant = "event.tenant"
    case payloadStructure = "payload.structure"
    case decryptionKey = "decryption.key"
    case decryptionTranscript = "decryption.transcript"
    case decryptionOpen = "decryption.open"
    case responseDocuments = "response.documents"
    case issuerChain = "issuer.chain"
    case issuerCertificate = "issuer.certificate"
    case issuerSignature = "issuer.signature"
    case msoStructure = "mso.structure"
    case msoDocType = "mso.doctype"
    case msoValidity = "mso.validity"
    case msoDigests = "mso.digests"
    case deviceAuthentication = "device.authentication"
    case requestAge = "request.age"
    case requestNonce = "request.nonce"

    /// `allCases` is built anew on every use; the order is needed for every status.
    static let order = allCases
    /// The position in check order, which is also the check's slot in a `CheckReport`.
    var rank: Int { Self.order.firstIndex(of: self)! }

    public static func < (lhs: CheckName, rhs: CheckName) -> Bool { lhs.rank < rhs.rank }

    /// Checks that must have passed for a `verified` verdict. The others may be
    /// skipped where they do not apply: decryption for a plain DeviceResponse,
    /// the transcript pre-check outside Apple's envelope, the nonce check when
    /// no nonce store is attached (`veridoc verify`).
    public var isRequiredForVerified: Bool {
        switch self {
        case .decryptionKey, .decryptionTranscript, .decryptionOpen, .requestNonce: false
        default: true
        }
    }
}

public enum CheckStatus: String, Sendable {
    case passed
    case failed
    case skipped
}

public struct Reason: Sendable, Equatable {
    public let code: ReasonCode
    /// For people: names structures, checks and certificates, never element values, nonces or keys.
    public let detail: String

    public init(_ code: ReasonCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }
}

/// What the checks found. A check that is never recorded counts as skipped;
/// a failure is never overwritten by a later pass (several documents may
/// each report the same check).
public struct CheckReport: Sendable {
    /// One slot per check, in check order: a dictionary here was rehashed and
    /// regrown as every event's dozen checks came in.
    private var statuses = [CheckStatus?](repeating: nil, count: CheckName.order.count)
    private var collected: [Reason] = []

    public init() {}

    public mutating func pass(_ check: CheckName) {
        let slot = check.rank
        if statuses[slot] == nil || statuses[slot] == .skipped { statuses[slot] = .passed }
    }

    public mutating func fail(_ check: CheckName, _ code: ReasonCode, _ detail: String) {
        statuses[check.rank] = .failed
        if let index = collected.firstIndex(where: { $0.code == code }) {
            // One reason per code: several findings of one kind share it.
            let previous = collected[index]
            if !previous.detail.contains(detail) {
                collected[index] = Reason(code, previous.detail + "; " + detail)
            }
        } else {
            collected.append(Reason(code, detail))
        }
    }

    public mutating func fail(_ check: CheckName, _ reason: Reason) {
        fail(check, reason.code, reason.detail)
    }

    public mutating func skip(_ check: CheckName) {
        let slot = check.rank
        if statuses[slot] == nil { statuses[slot] = .skipped }
    }

    public func status(of check: CheckName) -> CheckStatus {
        statuses[check.rank] ?? .skipped
    }

    /// Every check, in check order.
    public var checks: [(name: CheckName, status: CheckStatus)] {
        CheckName.order.map { ($0, status(of: $0)) }
    }

    /// Every reason, in reason-code order.
    public var reasons: [Reason] {
        collected.enumerated().sorted { ($0.element.code, $0.offset) < ($1.element.code, $1.offset) }.map(\.element)
    }

    public var isVerified: Bool {
        collected.isEmpty && CheckName.order.allSatisfy { !$0.isRequiredForVerified || status(of: $0) == .passed }
    }

    /// The same statuses and reason codes, every reason's detail replaced by `detail`.
    public func replacingDetails(with detail: String) -> CheckReport {
        var report = self
        report.collected = collected.map { Reason($0.code, detail) }
        return report
    }
}
