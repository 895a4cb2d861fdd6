public enum CheckStatus: String, Sendable {
    case passed
    case failed
    case skipped
    /// Only in a test tenant's outcome: the check does not apply to Apple's
    /// mock response (the Simulator's zeroed signatures, a developer
    /// profile's missing issuer signature). Never counts as passed for a
    /// production verdict.
    case notApplicable = "not_applicable"
}

public struct Reason: Sendable, Equatable {
    public let code: ReasonCode
    /// For people: names structures, checks and certificates, never element values, nonces or keys.
    /// At most `maxDetailBytes` of UTF-8.
    public let detail: String

    /// Details name structures and a few of the findings, never all of them:
    /// an outcome, a log line and a results row stay small whatever the input.
    public static let maxDetailBytes = 1024

    public init(_ code: ReasonCode, _ detail: String) {
        self.code = code
        self.detail = Self.bounded(detail)
    }

    /// `detail` cut at a character boundary to `maxDetailBytes`, marked with an ellipsis.
    static func bounded(_ detail: String) -> String {
        guard detail.utf8.count > maxDetailBytes else { return detail }
        let head = Array(detail.utf8.prefix(maxDetailBytes))
        // The ellipsis takes three bytes; the cut moves back to the start of a scalar.
        var end = maxDetailBytes - 3
        while end > 0 && head[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: head[..<end], as: UTF8.self) + "…"
    }
}

/// What the checks found. A check that is never recorded counts as skipped;
/// a failure is never overwritten by a later pass (several documents may
/// each report the same check).
///
/// Every code has one reason. Findings of one code beyond the first few are
/// counted, not kept: a response of thousands of failing documents costs
/// constant space and time per finding, and its detail says how many there
/// were and names the first ones.
public struct CheckReport: Sendable {
    /// Distinct findings a reason names before it only counts the rest.
    public static let namedFindings = 3

    /// One slot per check, in check order: a dictionary here would be rehashed
    /// and regrown as every event's dozen checks came in.
    private var statuses = [CheckStatus?](repeating: nil, count: CheckName.order.count)
    /// One slot per reason code, in code order; nil for a code never reported.
    private var findings = [Findings?](repeating: nil, count: ReasonCode.order.count)

    private struct Findings: Sendable {
        var named: [String]
        /// Findings beyond `named`, a repeat of a named one not counted.
        var unnamed = 0
        /// When set, replaces the whole detail (`replacingDetails`).
        var replacement: String?

        var detail: String {
            if let replacement { return replacement }
            let listed = named.joined(separator: "; ")
            return unnamed == 0 ? listed : "\(listed); and \(unnamed) more"
        }
    }

    public init() {}

    public mutating func pass(_ check: CheckName) {
        let slot = check.rank
        if statuses[slot] == nil || statuses[slot] == .skipped { statuses[slot] = .passed }
    }

    public mutating func fail(_ check: CheckName, _ code: ReasonCode, _ detail: String) {
        assert(VerificationPolicy.declares(check, code), "\(check.rawValue) does not declare \(code.rawValue)")
        statuses[check.rank] = .failed
        let slot = code.rank
        guard var found = findings[slot] else {
            findings[slot] = Findings(named: [Reason.bounded(detail)])
            return
        }
        let detail = Reason.bounded(detail)
        if !found.named.contains(detail) {
            if found.named.count < Self.namedFindings { found.named.append(detail) } else { found.unnamed += 1 }
        }
        findings[slot] = found
    }

    public mutating func fail(_ check: CheckName, _ reason: Reason) {
        fail(check, reason.code, reason.detail)
    }

    public mutating func skip(_ check: CheckName) {
        let slot = check.rank
        if statuses[slot] == nil { statuses[slot] = .skipped }
    }

    /// Records that `check` does not apply to a test tenant's mock response;
    /// a finding of the check (there should be none) still wins.
    public mutating func markNotApplicable(_ check: CheckName) {
        let slot = check.rank
        if statuses[slot] != .failed { statuses[slot] = .notApplicable }
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
        zip(ReasonCode.order, findings).compactMap { code, found in found.map { Reason(code, $0.detail) } }
    }

    /// Whether any reason was reported.
    public var hasReasons: Bool { findings.contains { $0 != nil } }

    /// Production assurance: no reason, every required check passed.
    public var isVerified: Bool { isAccepted(allowingNotApplicable: false) }

    /// No reason, and every required check passed or, when
    /// `allowingNotApplicable` (a test tenant's classified response), was not applicable.
    public func isAccepted(allowingNotApplicable: Bool) -> Bool {
        !hasReasons && CheckName.order.allSatisfy { check in
            guard check.isRequiredForVerified else { return true }
            let status = status(of: check)
            return status == .passed || (allowingNotApplicable && status == .notApplicable)
        }
    }

    /// The same statuses and reason codes, every reason's detail replaced by `detail`.
    public func replacingDetails(with detail: String) -> CheckReport {
        var report = self
        report.findings = findings.map { found in found.map { _ in Findings(named: [], replacement: Reason.bounded(detail)) } }
        return report
    }
}
