import Foundation

/// `request.age`: the request was issued no longer ago than the tenant allows
/// (`maxRequestAgeSeconds`, 600 s by default) and not in the future beyond the
/// allowed clock skew. Runs whatever else failed.
enum RequestAgeCheck: RequestCheck {
    static let name = CheckName.requestAge
    static let reasons: [ReasonCode] = [.requestExpired]

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        let maxAge = request.configuredTenant?.maxRequestAge ?? 600
        let age = request.time.timeIntervalSince(request.request.time)
        if age > maxAge {
            report.fail(name, .requestExpired, "request issued \(Int(age)) s before verification, more than the allowed \(Int(maxAge)) s")
        } else if age < -request.allowedClockSkew {
            report.fail(name, .requestExpired, "request time lies \(Int(-age)) s in the future")
        } else {
            report.pass(name)
        }
    }
}
