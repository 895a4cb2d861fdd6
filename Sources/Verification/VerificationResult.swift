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
    public let report: CheckReport
    public let documents: [DocumentSummary]
    public let requestedElements: [RequestedElement]
    /// The value whose single use the pipeline enforces: the Apple nonce, the
    /// Annex C EncryptionInfo nonce, or the proximity SessionTranscript.
    /// Never logged or stored in clear.
    public let replayToken: [UInt8]?

    public var isVerified: Bool { report.isVerified }
    public var verdict: String { isVerified ? "verified" : "rejected" }
}
