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
    public let report: CheckReport
    public let documents: [DocumentSummary]
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

    /// Production assurance: `verdict` is "verified". Never true for a test tenant's outcome.
    public var isVerified: Bool { !assurance.isTest && report.isVerified }

    /// Verified, or test-verified: what the pipeline keeps, seals and
    /// single-uses the nonce of. `verdict` says which.
    public var isAccepted: Bool {
        switch assurance {
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
        let report = RequestNonceCheck.recording(reused: reused, presentation: presentation, tenant: tenant, in: self.report)
        return VerificationResult(
            requestID: requestID, tenant: tenant, flow: flow, verifiedAt: verifiedAt, eventTime: eventTime, report: report, documents: documents,
            requestedElements: requestedElements, replayToken: replayToken, sessionID: sessionID, assurance: assurance,
            presentationTokens: presentationTokens)
    }
}

extension VerificationResult {
    /// The result without element values, names and everything else kept:
    /// all that is left to hold once the values are sealed for storage and
    /// for the outcome. Released values cannot be sealed again.
    public func releasingElementValues() -> VerificationResult {
        VerificationResult(
            requestID: requestID, tenant: tenant, flow: flow, verifiedAt: verifiedAt, eventTime: eventTime, report: report,
            documents: documents.map { $0.releasingValues() }, requestedElements: requestedElements, replayToken: replayToken, sessionID: sessionID,
            assurance: assurance, presentationTokens: presentationTokens)
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
