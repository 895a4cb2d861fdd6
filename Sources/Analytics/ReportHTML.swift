import Foundation
import Storage

/// `veridoc report --html`: one self-contained page (inline CSS and SVG, no
/// scripts, no external assets; its Content-Security-Policy refuses any) that
/// an analyst opens first: headline figures, verified vs rejected on a real
/// time axis, each rejection reason with what it means, outcomes and latency.
/// Every count of 1–4 is shown as "<5"; a chart draws such a cell as a dashed
/// outline of height 5 instead of its true height, so the picture does not
/// reveal what the label hides, and the verified share is left out when it
/// would give such a count away.
public enum ReportHTML {
    /// Nothing but the page's own inline styles may load or run.
    public static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'"

    public static func render(_ snapshot: AnalyticsSnapshot, generatedAt: Date = Date(), binning: ReportTimeline.Binning? = nil) -> String {
        let headline = ReportHeadline(snapshot)
        let timeline = ReportTimeline(hours: snapshot.hours, since: snapshot.since, until: generatedAt, maximumTicks: ReportCharts.maximumTicks, binning: binning)
        let windowEnd = timeline.bins.last.map { $0.start.addingTimeInterval(Double(timeline.binHours) * 3600) } ?? generatedAt

        var body = "<h1>Veridoc verification outcomes</h1>\n"
        body += "<p class=\"window\">\(escape(StatsTable.timestamp(snapshot.since))) to \(escape(StatsTable.timestamp(windowEnd)))"
            + (snapshot.tenant.map { ", tenant \(escape($0))" } ?? ", all tenants")
            + "; generated \(escape(StatsTable.timestamp(generatedAt))). Counts of 1–4 are shown as &lt;5.</p>\n"
            + "<p class=\"window\">\(escape(StatsTable.scope(snapshot.assurance)))</p>\n"
        body += headlineSection(headline)

        body += "<h2>Verified vs rejected per \(timeline.binName)</h2>\n"
        body += "<p class=\"legend\"><span class=\"key verified\"></span>verified<span class=\"key rejected\"></span>rejected"
            + "<span class=\"key small\"></span>1–4 (drawn as 5)</p>\n"
        body += ReportCharts.timeline(timeline)
        body += "<details><summary>Hours with results, as a table</summary>\n" + htmlTable(["Hour (UTC)", "Verified", "Rejected"], snapshot.hours.map {
            [StatsTable.timestamp($0.hour), Suppression.display($0.verified), Suppression.display($0.rejected)]
        }, id: "hours") + "</details>\n"

        body += "<h2>Rejection reasons</h2>\n"
        body += "<p class=\"note\">A result rejected for several reasons counts under each of them.</p>\n"
        body += ReportCharts.reasonBars(headline.reasons)
        body += htmlTable(["Reason", "Rejected results", "What it means"], headline.reasons.map {
            [codeHTML($0.code), escape(Suppression.display($0.count)), explanationHTML($0.code)]
        }, id: "reason-explanations", cellsAreHTML: true)
        body += "<h3>By tenant and flow</h3>\n<p class=\"note\">Reason <code>none</code> counts the verified results.</p>\n"
        body += htmlTable(["Tenant", "Flow", "Reason", "Count"], snapshot.reasons.map {
            [$0.tenant, $0.flow, $0.reason, Suppression.display($0.count)]
        }, id: "reasons")

        body += "<h2>Outcomes</h2>\n" + absentValuesNote(snapshot)
        body += htmlTable(["Tenant", "Flow", "DocType", "Issuer", "Verdict", "Count"], snapshot.outcomes.map {
            [$0.tenant, $0.flow, $0.docType, $0.issuerCountry, $0.verdict, Suppression.display($0.count)]
        }, id: "outcomes")

        body += "<h2>Device authentication</h2>\n<p class=\"note\">signature: the holder's device key signed the response; "
            + "mac: a device MAC, counted only because the named registered reader signed the submission (docs/device-authentication.md).</p>\n"
        body += htmlTable(["Tenant", "Flow", "Verdict", "Method", "Reader", "Count"], snapshot.deviceAuthentication.map {
            [$0.tenant, $0.flow, $0.verdict, $0.method, $0.reader, Suppression.display($0.count)]
        }, id: "device-authentication")

        body += "<h2>Revocation</h2>\n<p class=\"note\">status: what the documents' status lists and identifier lists said when the result was made "
            + "(none: the MSO names no list); later: revoked or suspended found after the result was accepted (docs/revocation.md).</p>\n"
        body += htmlTable(["Tenant", "Verdict", "Status", "Later", "Count"], snapshot.revocation.map {
            [$0.tenant, $0.verdict, $0.status, $0.later, Suppression.display($0.count)]
        }, id: "revocation")

        body += "<h2>Age checks</h2>\n<p class=\"note\">age(atLeast:) questions asked. The answers, and which element answered "
            + "them (which can tell the answer), are the holders' and are never stored (docs/retention.md).</p>\n"
        body += htmlTable(["Tenant", "DocType", "Verdict", "At least", "Count"], snapshot.ageChecks.map {
            [$0.tenant, $0.docType, $0.verdict, String($0.atLeast), Suppression.display($0.count)]
        }, id: "age-checks")

        body += "<h2>Elements</h2>\n<p class=\"note\">The elements accepted results returned, by name: whether the request asked for each, "
            + "and the retention decided for it (willNotStore values are never stored; docs/retention.md).</p>\n"
        body += htmlTable(["Tenant", "DocType", "Namespace", "Element", "Requested", "Intent", "Count"], snapshot.elements.map {
            [$0.tenant, $0.docType, $0.namespace, $0.element, $0.requested ? "yes" : "no", $0.intent, Suppression.display($0.count)]
        }, id: "elements")

        body += "<h2>Processing latency (seconds, receipt → verification)</h2>\n"
        body += ReportCharts.latency(snapshot.latency)
        body += htmlTable(["Tenant", "Flow", "Count", "p50", "p90", "p99"], snapshot.latency.map(latencyCells), id: "latency")
        body += "<details><summary>Per hour</summary>\n" + htmlTable(["Hour (UTC)", "Tenant", "Flow", "Count", "p50", "p90", "p99"], snapshot.hourlyLatency.map {
            [StatsTable.timestamp($0.hour ?? snapshot.since)] + latencyCells($0)
        }, id: "latency-hourly") + "</details>\n"

        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy)">
            <title>Veridoc outcomes</title>
            <style>
            \(stylesheet)
            </style></head><body>
            \(body)</body></html>

            """
    }

    static let stylesheet = """
        body{font-family:system-ui,sans-serif;margin:2em auto;padding:0 1.5em;color:#1a1a1a;max-width:1040px;line-height:1.45}
        h1{margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
        .window,.note{color:#333;max-width:62em}
        .figures{display:grid;grid-template-columns:repeat(4,1fr);gap:12px;margin:1.2em 0}
        .figure{border:1px solid #bbb;border-radius:6px;padding:.7em 1em;background:#f7f7f7}
        .figure .value{display:block;font-size:2em;font-weight:600;line-height:1.2}
        .figure .label{display:block;color:#333}
        ol.top-reasons li{margin:.3em 0}.top-reasons .count{font-weight:600}
        table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left;vertical-align:top}
        th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
        td .cause{color:#444;font-size:.9em;margin-top:.3em}
        code{font-family:ui-monospace,monospace;font-size:.92em;background:#eef0f2;padding:0 .25em;border-radius:3px}
        details{margin:.5em 0}summary{cursor:pointer;color:#1a4f8a}
        svg.chart{display:block;margin:.5em 0 1em}
        .verified{fill:#2e7d32}.rejected{fill:#c62828}.bar{fill:#1565c0}.small{fill:#d6d6d6;stroke:#444;stroke-width:1;stroke-dasharray:3 2}.narrow .small{stroke:none;fill:#a0a0a0}
        .hit{fill:transparent}.bin:hover .hit{fill:#00000012}
        .grid{stroke:#e2e2e2}.baseline,.tick{stroke:#444}
        .axis{font-size:13px;fill:#222}
        .legend .key{display:inline-block;width:12px;height:12px;margin:0 .35em 0 1.2em;vertical-align:-1px}
        .legend .key:first-child{margin-left:0}
        .key.verified{background:#2e7d32}.key.rejected{background:#c62828}.key.small{background:#d6d6d6;border:1px dashed #444;width:10px;height:10px}
        """

    static func headlineSection(_ headline: ReportHeadline) -> String {
        func figure(_ id: String, _ value: String, _ label: String) -> String {
            "<div class=\"figure\" id=\"\(id)\"><span class=\"value\">\(value)</span><span class=\"label\">\(label)</span></div>\n"
        }
        var out = "<section id=\"headline\"><div class=\"figures\">\n"
        out += figure("figure-events", escape(Suppression.display(headline.events)), "events with a result (verified or rejected)")
        if let rate = headline.verifiedRate {
            out += figure("figure-verified-rate", rate, "verified (\(headline.verified) of \(headline.events))")
        } else if headline.events == 0 {
            out += figure("figure-verified-rate", "–", "verified (no events in this window)")
        } else {
            out += figure("figure-verified-rate", "–", "verified share hidden: it would reveal a count under 5")
        }
        out += figure("figure-before-document", escape(Suppression.display(headline.rejectedBeforeDocument)),
                      "rejected before a document was read (DocType “(none)” below)")
        out += figure("figure-dead-letters", "–", "dead letters: not recorded in the database (below)")
        out += "</div>\n<p class=\"note\" id=\"dead-letters\">\(deadLettersExplanation)</p>\n<h2>Top rejection reasons</h2>\n"
        if headline.reasons.isEmpty {
            out += "<p id=\"top-reasons\">No rejections in this window.</p>\n"
        } else {
            out += "<ol id=\"top-reasons\" class=\"top-reasons\">\n"
            for reason in headline.reasons.prefix(3) {
                let summary = ReasonGlossary.shared.summaryHTML(reason.code) ?? unknownCodeHTML
                out += "<li>\(codeHTML(reason.code)) <span class=\"count\">\(escape(Suppression.display(reason.count)))</span> — \(summary)</li>\n"
            }
            out += "</ol>\n"
        }
        return out + "</section>\n"
    }

    /// The database holds no dead letters: the worker sends them to a topic and
    /// counts them in a metric of its own process, neither of which this page reads.
    static let deadLettersExplanation = """
        Dead letters are not recorded in the database this page is made from, so no count of them can be shown here, \
        and they are not among the events above. \
        Records the worker cannot read as an event (too large, not UTF-8, no event id) go to the dead-letter topic \
        (<code>kafka.deadLetterTopic</code>, default <code>veridoc.requests.dlq</code>) and are counted by the worker metric \
        <code>veridoc_dead_letters_total{cause}</code>: the Grafana panel “Dead letters” and the alert <code>VeridocDeadLetters</code>.
        """

    static let unknownCodeHTML = "not in <code>reason-codes.md</code> (a code newer than this binary?)"

    static func codeHTML(_ code: String) -> String { "<code>\(escape(code))</code>" }

    static func explanationHTML(_ code: String) -> String {
        let glossary = ReasonGlossary.shared
        guard let meaning = glossary.meaningHTML(code), let cause = glossary.typicalCauseHTML(code) else { return unknownCodeHTML }
        return meaning + "<div class=\"cause\">Typical cause: \(cause)</div>"
    }

    /// What "(none)" stands for in the outcome rows that have it.
    static func absentValuesNote(_ snapshot: AnalyticsSnapshot) -> String {
        var out = ""
        if snapshot.outcomes.contains(where: { $0.docType == ReportHeadline.absent }) {
            out += "<p class=\"note\" id=\"no-doctype\">DocType “(none)”: the result was rejected before a document was read. "
                + "It failed at the event, payload or decryption stage (for example <code>event.invalid</code>, <code>payload.malformed</code>, "
                + "<code>decryption.unknown_key</code>), or the wallet shared no document (<code>response.no_documents</code>), "
                + "so there is no document type and no issuer to report.</p>\n"
        }
        if snapshot.outcomes.contains(where: { $0.tenant == ReportHeadline.absent || $0.flow == ReportHeadline.absent }) {
            out += "<p class=\"note\" id=\"no-tenant\">Tenant or flow “(none)”: the event was invalid (<code>event.invalid</code>) "
                + "before its tenant or flow could be read.</p>\n"
        }
        return out
    }

    static func latencyCells(_ row: AnalyticsSnapshot.Latency) -> [String] {
        let hide = Suppression.isSuppressed(row.count)
        return [row.tenant, row.flow, Suppression.display(row.count)] + [row.p50, row.p90, row.p99].map { hide ? "-" : String(format: "%.3f", $0) }
    }

    /// Cells are text, escaped here, unless `cellsAreHTML` (then escaped by the caller).
    static func htmlTable(_ header: [String], _ rows: [[String]], id: String, cellsAreHTML: Bool = false) -> String {
        guard !rows.isEmpty else { return "<p>No data.</p>\n" }
        var out = "<table id=\"\(id)\"><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows {
            out += "<tr>" + row.map { cell in
                let html = cellsAreHTML ? cell : escape(cell)
                let numeric = ["<5", "&lt;5", "-"].contains(cell) || Double(cell) != nil
                return numeric ? "<td class=\"n\">\(html)</td>" : "<td>\(html)</td>"
            }.joined() + "</tr>\n"
        }
        return out + "</table>\n"
    }

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
