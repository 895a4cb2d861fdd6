import Foundation

extension RequestUnderVerification {
    /// Whether `signed` lies no more than `maxAge` before the verification
    /// time and no further after it than the allowed clock skew; when it does
    /// not, `check` fails with `reason`. `issued` and `signedTime` word the
    /// detail: "\(issued) 700 s before verification", "\(signedTime) lies 5 s
    /// in the future".
    func isTimely(_ signed: Date, maxAge: TimeInterval, issued: String, signedTime: String, failing check: CheckName, _ reason: ReasonCode,
                  into report: inout CheckReport) -> Bool {
        let age = time.timeIntervalSince(signed)
        if age > maxAge {
            report.fail(check, reason, "\(issued) \(Int(age)) s before verification, more than the allowed \(Int(maxAge)) s")
            return false
        }
        if age < -allowedClockSkew {
            report.fail(check, reason, "\(signedTime) lies \(Int(-age)) s in the future")
            return false
        }
        return true
    }
}
