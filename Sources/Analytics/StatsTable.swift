import Foundation
import Storage

/// `veridoc stats` output: plain aligned text tables, counts suppressed.
public enum StatsTable {
    public static func render(_ snapshot: AnalyticsSnapshot) -> String {
        var out = "Outcomes since \(timestamp(snapshot.since))" + (snapshot.tenant.map { " for tenant \($0)" } ?? "")
            + " (counts of 1–4 shown as <5)\n" + scope(snapshot.assurance) + "\n\n"
        out += table(["TENANT", "FLOW", "DOCTYPE", "ISSUER", "VERDICT", "COUNT"],
                     snapshot.outcomes.map { [$0.tenant, $0.flow, $0.docType, $0.issuerCountry, $0.verdict, Suppression.display($0.count)] })
        out += "\nReasons (an event with several reasons counts under each; none = verified)\n\n"
        out += table(["TENANT", "FLOW", "REASON", "COUNT"], snapshot.reasons.map { [$0.tenant, $0.flow, $0.reason, Suppression.display($0.count)] })
        out += "\nDevice authentication (signature: the device key signed; mac: a MAC a registered reader signed for)\n\n"
        out += table(["TENANT", "FLOW", "VERDICT", "METHOD", "READER", "COUNT"], snapshot.deviceAuthentication.map {
            [$0.tenant, $0.flow, $0.verdict, $0.method, $0.reader, Suppression.display($0.count)]
        })
        out += "\nRevocation (STATUS as in the outcome's status; LATER: revoked or suspended found after acceptance)\n\n"
        out += table(["TENANT", "VERDICT", "STATUS", "LATER", "COUNT"], snapshot.revocation.map {
            [$0.tenant, $0.verdict, $0.status, $0.later, Suppression.display($0.count)]
        })
        out += "\nAge checks asked (age(atLeast:); the answers are the holders' and are not stored)\n\n"
        out += table(["TENANT", "DOCTYPE", "VERDICT", "AT LEAST", "COUNT"], snapshot.ageChecks.map {
            [$0.tenant, $0.docType, $0.verdict, String($0.atLeast), Suppression.display($0.count)]
        })
        out += "\nElements of accepted results (REQUESTED: asked for by the request; INTENT: the retention decided; names only)\n\n"
        out += table(["TENANT", "DOCTYPE", "NAMESPACE", "ELEMENT", "REQUESTED", "INTENT", "COUNT"], snapshot.elements.map {
            [$0.tenant, $0.docType, $0.namespace, $0.element, $0.requested ? "yes" : "no", $0.intent, Suppression.display($0.count)]
        })
        out += "\nProcessing latency, seconds from receipt to verification (percentiles hidden under 5 events)\n\n"
        out += table(["TENANT", "FLOW", "COUNT", "P50", "P90", "P99"], snapshot.latency.map { row in
            let hide = Suppression.isSuppressed(row.count)
            return [row.tenant, row.flow, Suppression.display(row.count)] + [row.p50, row.p90, row.p99].map { hide ? "-" : seconds($0) }
        })
        return out
    }

    /// Which outcomes a page or table shows: production only unless asked.
    public static func scope(_ assurance: AnalyticsSnapshot.AssuranceScope) -> String {
        switch assurance {
        case .production: "Production outcomes only; test tenants' (Apple's Simulator and developer profiles) with --assurance test."
        case .test: "TEST outcomes only: test tenants' mock responses (Apple's Simulator and developer profiles), not real IDs."
        case .all: "Production and TEST outcomes together: verdicts test_verified and test_rejected are mock responses, not real IDs."
        }
    }

    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        guard !rows.isEmpty else { return "  (none)\n" }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            "  " + row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
