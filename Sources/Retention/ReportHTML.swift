import Foundation
import Storage

/// `veridoc report --html`: one self-contained page (inline CSS and SVG, no
/// scripts, no external assets) with verified vs rejected over time, the
/// reasons breakdown and latency. Every count of 1–4 is shown as "<5"; a
/// chart draws such a cell as a dashed outline of height 5 instead of its
/// true height, so the picture does not reveal what the label hides.
public enum ReportHTML {
    public static func render(_ snapshot: AnalyticsSnapshot, generatedAt: Date = Date()) -> String {
        var body = "<h1>Veridoc verification outcomes</h1>\n"
        body += "<p>Since \(escape(StatsTable.timestamp(snapshot.since)))" + (snapshot.tenant.map { ", tenant \(escape($0))" } ?? "")
            + "; generated \(escape(StatsTable.timestamp(generatedAt))). Counts of 1–4 are shown as &lt;5.</p>\n"

        body += "<h2>Verified vs rejected per hour</h2>\n" + overTimeChart(snapshot.hours)
        body += htmlTable(["Hour (UTC)", "Verified", "Rejected"], snapshot.hours.map {
            [StatsTable.timestamp($0.hour), Suppression.display($0.verified), Suppression.display($0.rejected)]
        }, id: "hours")

        body += "<h2>Outcomes</h2>\n" + htmlTable(["Tenant", "Flow", "DocType", "Issuer", "Verdict", "Count"], snapshot.outcomes.map {
            [$0.tenant, $0.flow, $0.docType, $0.issuerCountry, $0.verdict, Suppression.display($0.count)]
        }, id: "outcomes")

        var reasonTotals: [String: Int] = [:]
        for row in snapshot.reasons where row.reason != "none" { reasonTotals[row.reason, default: 0] += row.count }
        let reasonBars = reasonTotals.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
        body += "<h2>Rejection reasons</h2>\n" + barChart(reasonBars.map { ($0.key, $0.value) })
        body += htmlTable(["Tenant", "Flow", "Reason", "Count"], snapshot.reasons.map {
            [$0.tenant, $0.flow, $0.reason, Suppression.display($0.count)]
        }, id: "reasons")

        body += "<h2>Processing latency (seconds, receipt → verification)</h2>\n"
        body += latencyChart(snapshot.latency)
        body += htmlTable(["Tenant", "Flow", "Count", "p50", "p90", "p99"], snapshot.latency.map(latencyCells), id: "latency")
        body += "<h3>Per hour</h3>\n" + htmlTable(["Hour (UTC)", "Tenant", "Flow", "Count", "p50", "p90", "p99"], snapshot.hourlyLatency.map {
            [StatsTable.timestamp($0.hour ?? snapshot.since)] + latencyCells($0)
        }, id: "latency-hourly")

        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Veridoc outcomes</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
            table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
            td.n{text-align:right;font-variant-numeric:tabular-nums}svg{display:block;margin:1em 0}
            .verified{fill:#2e7d32}.rejected{fill:#c62828}.bar{fill:#1565c0}.small{fill:none;stroke:#888;stroke-dasharray:3 2}
            .axis{font-size:10px;fill:#555}
            </style></head><body>
            \(body)</body></html>

            """
    }

    static func latencyCells(_ row: AnalyticsSnapshot.Latency) -> [String] {
        let hide = Suppression.isSuppressed(row.count)
        return [row.tenant, row.flow, Suppression.display(row.count)] + [row.p50, row.p90, row.p99].map { hide ? "-" : String(format: "%.3f", $0) }
    }

    static func htmlTable(_ header: [String], _ rows: [[String]], id: String) -> String {
        guard !rows.isEmpty else { return "<p>No data.</p>\n" }
        var out = "<table id=\"\(id)\"><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows {
            out += "<tr>" + row.map { cell in
                let numeric = cell == "<5" || cell == "-" || Double(cell) != nil
                return numeric ? "<td class=\"n\">\(escape(cell))</td>" : "<td>\(escape(cell))</td>"
            }.joined() + "</tr>\n"
        }
        return out + "</table>\n"
    }

    /// The height a count is drawn with: small counts as the threshold.
    static func drawn(_ count: Int) -> Int { Suppression.isSuppressed(count) ? Suppression.threshold : count }

    static func overTimeChart(_ hours: [AnalyticsSnapshot.Hour]) -> String {
        guard !hours.isEmpty else { return "" }
        let width = 900.0, height = 200.0, left = 40.0
        let maximum = Double(max(1, hours.map { drawn($0.verified) + drawn($0.rejected) }.max() ?? 1))
        let slot = (width - left) / Double(hours.count)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height + 30))\" role=\"img\" aria-label=\"verified and rejected per hour\">\n"
        svg += "<text class=\"axis\" x=\"0\" y=\"10\">\(Int(maximum))</text><text class=\"axis\" x=\"0\" y=\"\(Int(height))\">0</text>\n"
        for (index, hour) in hours.enumerated() {
            let x = left + Double(index) * slot
            var y = height
            for (count, kind) in [(hour.verified, "verified"), (hour.rejected, "rejected")] where count > 0 {
                let h = Double(drawn(count)) / maximum * height
                y -= h
                let css = Suppression.isSuppressed(count) ? "small" : kind
                svg += "<rect class=\"\(css)\" x=\"\(fmt(x + 1))\" y=\"\(fmt(y))\" width=\"\(fmt(max(1, slot - 2)))\" height=\"\(fmt(h))\">"
                    + "<title>\(escape(StatsTable.timestamp(hour.hour))) \(kind): \(escape(Suppression.display(count)))</title></rect>\n"
            }
        }
        svg += "<text class=\"axis\" x=\"\(Int(left))\" y=\"\(Int(height + 20))\">\(escape(StatsTable.timestamp(hours[0].hour)))</text>\n"
        svg += "<rect class=\"verified\" x=\"600\" y=\"\(Int(height + 10))\" width=\"10\" height=\"10\"/><text class=\"axis\" x=\"615\" y=\"\(Int(height + 19))\">verified</text>"
        svg += "<rect class=\"rejected\" x=\"680\" y=\"\(Int(height + 10))\" width=\"10\" height=\"10\"/><text class=\"axis\" x=\"695\" y=\"\(Int(height + 19))\">rejected</text>\n"
        return svg + "</svg>\n"
    }

    static func barChart(_ bars: [(String, Int)]) -> String {
        guard !bars.isEmpty else { return "" }
        let labelWidth = 260.0, width = 600.0, row = 22.0
        let maximum = Double(max(1, bars.map { drawn($0.1) }.max() ?? 1))
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(labelWidth + width + 60))\" height=\"\(Int(Double(bars.count) * row + 4))\" role=\"img\" aria-label=\"rejection reasons\">\n"
        for (index, (label, count)) in bars.enumerated() {
            let y = Double(index) * row
            let w = Double(drawn(count)) / maximum * width
            svg += "<text class=\"axis\" x=\"0\" y=\"\(fmt(y + 15))\">\(escape(label))</text>"
            svg += "<rect class=\"\(Suppression.isSuppressed(count) ? "small" : "bar")\" x=\"\(fmt(labelWidth))\" y=\"\(fmt(y + 3))\" width=\"\(fmt(w))\" height=\"\(fmt(row - 6))\"/>"
            svg += "<text class=\"axis\" x=\"\(fmt(labelWidth + w + 4))\" y=\"\(fmt(y + 15))\">\(escape(Suppression.display(count)))</text>\n"
        }
        return svg + "</svg>\n"
    }

    static func latencyChart(_ rows: [AnalyticsSnapshot.Latency]) -> String {
        let shown = rows.filter { !Suppression.isSuppressed($0.count) && $0.count > 0 }
        guard !shown.isEmpty else { return "" }
        let labelWidth = 260.0, width = 600.0, row = 14.0
        let maximum = max(0.001, shown.map(\.p99).max() ?? 0.001)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(labelWidth + width + 80))\" height=\"\(Int(Double(shown.count) * row * 4 + 4))\" role=\"img\" aria-label=\"latency percentiles\">\n"
        for (index, item) in shown.enumerated() {
            let top = Double(index) * row * 4
            svg += "<text class=\"axis\" x=\"0\" y=\"\(fmt(top + 12))\">\(escape(item.tenant + " / " + item.flow))</text>\n"
            for (offset, (name, value)) in [("p50", item.p50), ("p90", item.p90), ("p99", item.p99)].enumerated() {
                let y = top + Double(offset) * row + 2
                let w = value / maximum * width
                svg += "<rect class=\"bar\" x=\"\(fmt(labelWidth))\" y=\"\(fmt(y))\" width=\"\(fmt(w))\" height=\"\(fmt(row - 3))\" opacity=\"\(["1", "0.7", "0.45"][offset])\"/>"
                svg += "<text class=\"axis\" x=\"\(fmt(labelWidth + w + 4))\" y=\"\(fmt(y + 10))\">\(name) \(String(format: "%.3f", value)) s</text>\n"
            }
        }
        return svg + "</svg>\n"
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }

    public static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
