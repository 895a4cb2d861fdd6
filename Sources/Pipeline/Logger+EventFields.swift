import Observability
import Verification

extension Logger {
    /// The fields of a line about one event's result: `event` (its id, cut to
    /// 128 characters), `tenant` only when the event passed the tenant check
    /// (so it names a configured tenant, never free text from the event), and
    /// `reason` (the reason codes, or `none`). Never details, elements or nonces.
    public static func eventFields(_ result: VerificationResult) -> [String: String] {
        var fields: [String: String] = [:]
        let codes = result.report.reasons.map(\.code)
        if let id = result.requestID { fields["event"] = String(id.prefix(128)) }
        if let tenant = result.tenant, !codes.contains(.eventInvalid), !codes.contains(.eventUnknownTenant) {
            fields["tenant"] = tenant
        }
        fields["reason"] = codes.isEmpty ? "none" : codes.map(\.rawValue).joined(separator: ",")
        return fields
    }
}
