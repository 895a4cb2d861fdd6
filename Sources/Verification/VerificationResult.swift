import Foundation
import MDoc

/// Everything one verification found: the report of named checks, the facts
/// the outcome and analytics need, and (in memory only) what the pipeline
/// needs for replay protection and retention.
public struct VerificationResult: Sendable {
    public let requestID: String?
    public let tenant: String?
    public let flow: Flow?
    public let verifiedAt: Date
    /// The event's `time`: when the request and its nonce were issued.
    public let eventTime: Date?
    public private(set) var report: CheckReport
    public private(set) var documents: [DocumentSummary]
    public let requestedElements: [RequestedElement]
    /// The value whose single use the pipeline enforces: the Apple nonce, the
    /// Annex C EncryptionInfo nonce, or the proximity SessionTranscript.
    /// Never logged or stored in clear.
    public let replayToken: [UInt8]?
    /// The session of the nonce Veridoc issued (`IssuedNonce`), authenticated
    /// by it; nil for integrators' own nonces. The worker marks its status.
    public var sessionID: UUID? = nil
    /// Production, or test for every outcome of a test tenant.
    public var assurance: Assurance = .production
    /// One per document whose device key the MSO names
    /// (`PresentationIdentity`): single use across the whole deployment,
    /// whatever the tenant, flow or entry point. Never logged or stored in clear.
    public var presentationTokens: [[UInt8]] = []
    /// The documents whose revocation lists are still to be read
    /// (`DocumentStatusCheck`). While any is left the result is not
    /// accepted: a status never read is never taken for valid.
    public private(set) var statusQueries: [StatusQuery] = []
    /// The queries the status service answered, with their answers: what the
    /// worker keeps of an accepted result to read its lists again later. In
    /// memory only until then; never logged.
    public private(set) var resolvedStatus: [ResolvedStatus] = []
    /// The request's `age(atLeast:)` questions and their answers from the
    /// issuer-signed elements, found while the values were at hand (they
    /// are released before the outcome is written). Read them through
    /// `ages`, which withholds them from a result that is not accepted.
    public var ageAnswers: [AgeAnswer] = []

    /// Production assurance: `verdict` is "verified". Never true for a test tenant's outcome.
    public var isVerified: Bool { !assurance.isTest && statusQueries.isEmpty && report.isVerified }

    /// Verified, or test-verified: what the pipeline keeps, seals and
    /// single-uses the nonce of. `verdict` says which.
    public var isAccepted: Bool {
        guard statusQueries.isEmpty else { return false }
        return switch assurance {
        case .production: report.isVerified
        case .test(let kind): kind != nil && report.isAccepted(allowingNotApplicable: true)
        }
    }

    /// "verified" or "rejected"; for a test tenant "test_verified" or
    /// "test_rejected", so that no consumer reading the verdict alone takes a
    /// test for production assurance.
    public var verdict: String {
        switch (assurance.isTest, isAccepted) {
        case (false, true): "verified"
        case (false, false): "rejected"
        case (true, true): "test_verified"
        case (true, false): "test_rejected"
        }
    }

    /// Every verdict, production first.
    public static let verdicts = ["verified", "rejected", "test_verified", "test_rejected"]
}

extension VerificationResult {
    /// The `age(atLeast:)` answers an outcome carries: the answers of an
    /// accepted result, and unknown for each question otherwise, since an
    /// age read from a document that did not verify proves nothing.
    public var ages: [AgeAnswer] {
        isAccepted ? ageAnswers : ageAnswers.map { AgeAnswer(threshold: $0.threshold, value: .unknown, namespace: nil, element: nil, isDerived: false) }
    }

    /// The requested elements no document returned: what the holder
    /// withheld (or the wallet did not have). Empty when no document was read,
    /// since then nothing can be said of what was shared.
    public var withheldElements: [RequestedElement] {
        guard !documents.isEmpty, !requestedElements.isEmpty else { return [] }
        // Names compare by their bytes, as everywhere (`Identifier`).
        func key(_ namespace: String, _ element: String) -> [UInt8] { Array(namespace.utf8) + [0] + Array(element.utf8) }
        var returned = Set<[UInt8]>()
        for document in documents {
            for element in document.elements { returned.insert(key(element.namespace, element.identifier)) }
        }
        var seen = Set<[UInt8]>()
        return requestedElements.filter { element in
            let name = key(element.namespace, element.element)
            return !returned.contains(name) && seen.insert(name).inserted
        }
    }
}

extension VerificationResult {
    /// The result with the worker's single-use nonce check applied: passed
    /// when this event is the first accepted use of its nonce, failed
    /// (`request.nonce_reused`) when another event used it first.
    /// `presentation`: what was used before is the presentation itself
    /// (`presentationTokens`), possibly at another tenant, not the tenant's nonce.
    public func recordingNonceCheck(reused: Bool, presentation: Bool = false) -> VerificationResult {
        var result = self
        result.report = RequestNonceCheck.recording(reused: reused, presentation: presentation, tenant: tenant, in: report)
        return result
    }
}

extension VerificationResult {
    /// The result without element values, names and everything else kept:
    /// all that is left to hold once the values are sealed for storage and
    /// for the outcome. Released values cannot be sealed again.
    public func releasingElementValues() -> VerificationResult {
        var result = self
        result.documents = documents.map { $0.releasingValues() }
        return result
    }
}

extension VerificationResult {
    /// The result as an `event.invalid` rejection that keeps only the request
    /// id, flow and verification time: what is stored and published for an
    /// event whose result the database refused to hold (`detail` says why,
    /// without values).
    public func strippedForStorage(detail: String) -> VerificationResult {
        VerificationResult(
            requestID: requestID, tenant: nil, flow: flow, verifiedAt: verifiedAt, eventTime: nil, report: EventStructureCheck.rejecting(detail),
            documents: [], requestedElements: [], replayToken: nil, assurance: assurance.isTest ? .test(kind: nil) : .production)
    }
}

extension VerificationResult {
    /// The queries the status service is to resolve: none once the result is
    /// rejected for another reason, since then nothing it could learn would
    /// change the verdict, and nothing is fetched for a rejected event.
    public var pendingStatusQueries: [StatusQuery] { report.hasReasons ? [] : statusQueries }

    /// The result with `document.status` recorded: `answers` are those to
    /// `pendingStatusQueries`, in order (a rejected result takes none, and
    /// its references stay unread). Afterwards no query is pending.
    public func recordingStatus(_ answers: [CredentialStatus]) -> VerificationResult {
        var result = self
        let queries = pendingStatusQueries
        precondition(answers.count == queries.count, "one answer per pending status query")
        result.report = DocumentStatusCheck.recording(answers, for: queries, in: report)
        for (query, answer) in zip(queries, answers) where result.documents.indices.contains(query.document) {
            result.documents[query.document].status = answer
        }
        result.statusQueries = []
        result.resolvedStatus = zip(queries, answers).map { ResolvedStatus(query: $0, answer: $1) }
        return result
    }

    /// The result with its pending queries answered by `resolve` (waiting
    /// for them) and recorded; without a resolver a document that names a
    /// list is undetermined, never taken for valid.
    public func resolvingStatus(with resolve: (([StatusQuery]) -> [CredentialStatus])?) -> VerificationResult {
        let queries = pendingStatusQueries
        guard !queries.isEmpty else { return recordingStatus([]) }
        let unresolved = StatusUndetermined(step: "fetch", detail: "no status service answers here")
        return recordingStatus(resolve?(queries) ?? queries.map { _ in .undetermined(unresolved) })
    }

    /// The worst status of any document, the word a consumer reads first
    /// (`data.status`); nil when no document got as far as its status.
    public var status: CredentialStatus? {
        let known = documents.compactMap(\.status)
        for word in CredentialStatus.words {
            if let found = known.first(where: { $0.word == word }) { return found }
        }
        return nil
    }
}
