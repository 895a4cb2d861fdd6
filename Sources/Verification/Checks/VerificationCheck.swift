/// One named check of a verification: the reason codes it may report, and
/// whether a `verified` verdict needs it to have passed. Each check is a type
/// of its own in this folder; `VerificationPolicy.checks` orders them.
public protocol VerificationCheck: Sendable {
    static var name: CheckName { get }
    /// Every code the check may fail with, in the order reasons are reported.
    static var reasons: [ReasonCode] { get }
    /// Whether a `verified` verdict needs this check to have passed. A check
    /// that may be skipped where it does not apply says no.
    static var isRequiredForVerified: Bool { get }
}

extension VerificationCheck {
    public static var isRequiredForVerified: Bool { true }
}

/// A check of the request as a whole (its event, tenant, payload, decryption, response, age).
protocol RequestCheck: VerificationCheck {
    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport)
}

/// A check of one document of the response, run for each document in turn.
protocol DocumentCheck: VerificationCheck {
    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport)
}
