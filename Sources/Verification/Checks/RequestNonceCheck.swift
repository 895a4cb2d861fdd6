/// `request.nonce`: the request's nonce (`VerificationResult.replayToken`) is
/// used once. Recorded by the worker's nonce store when the result is stored
/// (`VerificationResult.recordingNonceCheck`), not by the verifier, so it is
/// skipped by `veridoc verify`.
public enum RequestNonceCheck: VerificationCheck {
    public static let name = CheckName.requestNonce
    public static let reasons: [ReasonCode] = [.requestNonceReused]
    public static let isRequiredForVerified = false

    /// `report` with the check recorded: failed when another event used the nonce first.
    static func recording(reused: Bool, presentation: Bool = false, tenant: String?, in report: CheckReport) -> CheckReport {
        var report = report
        if reused && presentation {
            // Names neither the tenant nor the event that used it first: that may be another tenant's traffic.
            report.fail(name, .requestNonceReused, "this presentation (the holder's device key and session transcript) was already accepted for another event")
        } else if reused {
            report.fail(name, .requestNonceReused, "the nonce was already accepted for another event of tenant \(tenant ?? "?")")
        } else {
            report.pass(name)
        }
        return report
    }
}
