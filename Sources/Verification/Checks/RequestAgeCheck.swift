import Foundation

/// `request.age`: the request is fresh. With a nonce Veridoc issued
/// (`RequestIssuedNonceCheck`), its session has not expired and was not
/// issued in the future, each beyond the allowed clock skew: the nonce's own
/// times decide, which no producer can restate. Otherwise the event's `time`
/// is no longer ago than the tenant allows (`maxRequestAgeSeconds`, 600 s by
/// default) and not in the future. Runs whatever else failed.
enum RequestAgeCheck: RequestCheck {
    static let name = CheckName.requestAge
    static let reasons: [ReasonCode] = [.requestExpired]
    /// The skew allowed around an issued nonce's times: serve and the workers
    /// are machines of one deployment, not a producer's clock somewhere.
    static let sessionClockSkew: TimeInterval = 30

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        if let issued = request.issuedNonce {
            let overdue = request.time.timeIntervalSince(issued.expiresAt)
            let early = issued.issuedAt.timeIntervalSince(request.time)
            let skew = min(request.allowedClockSkew, sessionClockSkew)
            if overdue > skew {
                report.fail(name, .requestExpired, "the session expired \(Int(overdue)) s before verification")
            } else if early > skew {
                report.fail(name, .requestExpired, "the session was issued \(Int(early)) s in the future")
            } else {
                report.pass(name)
            }
            return
        }
        if request.isTimely(request.request.time, maxAge: request.configuredTenant?.maxRequestAge ?? 600, issued: "request issued", signedTime: "request time",
                            failing: name, .requestExpired, into: &report) {
            report.pass(name)
        }
    }
}
