import Foundation
import Storage

/// The figures at the top of the report, from the same outcome rows as the
/// tables below it: how many events, what share verified, the commonest
/// rejection reasons, and how many were rejected before a document was read.
public struct ReportHeadline: Sendable {
    public struct ReasonTotal: Sendable, Equatable {
        public let code: String
        public let count: Int
    }

    public let events: Int
    public let verified: Int
    public let rejected: Int
    /// Rejected results with no document type: they failed before a document
    /// was read (event, payload or decryption stage, or no document shared).
    public let rejectedBeforeDocument: Int
    /// Reason codes by how many rejected results carry them, most first (ties by code).
    public let reasons: [ReasonTotal]

    /// What the views write for a value a result does not have (migration 3's COALESCE).
    public static let absent = "(none)"

    public init(_ snapshot: AnalyticsSnapshot) {
        events = snapshot.outcomes.reduce(0) { $0 + $1.count }
        verified = snapshot.outcomes.filter { $0.verdict == "verified" || $0.verdict == "test_verified" }.reduce(0) { $0 + $1.count }
        rejected = snapshot.outcomes.filter { $0.verdict == "rejected" || $0.verdict == "test_rejected" }.reduce(0) { $0 + $1.count }
        rejectedBeforeDocument = snapshot.outcomes.filter { ($0.verdict == "rejected" || $0.verdict == "test_rejected") && $0.docType == Self.absent }.reduce(0) { $0 + $1.count }
        var totals: [String: Int] = [:]
        // A verified result counts under the reason "none" in the view.
        for row in snapshot.reasons where row.reason != "none" { totals[row.reason, default: 0] += row.count }
        reasons = totals.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ReasonTotal(code: $0.key, count: $0.value) }
    }

    /// The verified share as "93.4%", or nil when showing it would let a
    /// reader work out a verdict count the page shows as "<5" (it and the
    /// event count together give both verdict counts).
    public var verifiedRate: String? {
        guard events > 0, !Suppression.isSuppressed(verified), !Suppression.isSuppressed(rejected) else { return nil }
        return String(format: "%.1f%%", Double(verified) / Double(events) * 100)
    }
}
