/// `event.structure`: the event is a well-formed verification request
/// (EventParser). A request that reached the verifier passed it; an event the
/// parser refused fails it and no other check runs.
public enum EventStructureCheck: RequestCheck {
    public static let name = CheckName.eventStructure
    public static let reasons: [ReasonCode] = [.eventInvalid]

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        report.pass(name)
    }

    /// The report of an event that is not a request: `detail` says why, without values.
    public static func rejecting(_ detail: String) -> CheckReport {
        var report = CheckReport()
        report.fail(name, .eventInvalid, detail)
        return report
    }
}
