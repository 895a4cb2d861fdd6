import Foundation
import Testing
import Verification
@testable import Analytics
@testable import Storage

/// The report page over a snapshot built by hand (ReportSample).
struct ReportHTMLTests {
    let html = ReportSample.html

    @Test("every hour of the window is a bin on the axis; hours without results are empty")
    func emptyHoursAreOnTheAxis() throws {
        #expect(occurrences(of: "<g class=\"bin\"", in: html) == 6)
        for offset in [1, 2, 4, 5] {
            let start = StatsTable.timestamp(ReportSample.hour(offset))
            let group = try #require(element(from: "<g class=\"bin\" data-start=\"\(start)\"", to: "</g>", in: html))
            #expect(group.contains("no results") && !group.contains("class=\"verified\"") && !group.contains("class=\"rejected\""))
        }
        // One tick an hour for a six-hour window, the day under the first.
        for label in ["15:00", "16:00", "17:00", "18:00", "19:00", "20:00", "Jun 15"] { #expect(html.contains(">\(label)</text>")) }
    }

    @Test("ticks fit and fall on round times, from hours to months", arguments: [3, 24, 72, 7 * 24, 30 * 24, 31 * 24, 90 * 24, 400 * 24])
    func ticksFit(hours: Int) {
        let since = ReportSample.since
        let timeline = ReportTimeline(hours: [], since: since, until: since.addingTimeInterval(Double(hours) * 3600),
                                      maximumTicks: ReportCharts.maximumTicks)
        #expect(timeline.bins.count * timeline.binHours >= hours)
        #expect(timeline.binHours == (hours > ReportTimeline.maximumHourlyBins ? 24 : 1))
        #expect(timeline.ticks.count >= 2 && timeline.ticks.count <= ReportCharts.maximumTicks, "\(timeline.ticks.map(\.label))")
        let gaps = zip(timeline.ticks.dropFirst(), timeline.ticks).map { $0.bin - $1.bin }
        #expect(Set(gaps).count == 1, "ticks evenly spaced: \(gaps)")
        #expect(timeline.ticks.first?.dayLabel != nil)
        for tick in timeline.ticks {
            let start = timeline.bins[tick.bin].start.timeIntervalSince1970
            #expect(start.truncatingRemainder(dividingBy: Double(gaps.first! * timeline.binHours) * 3600) == 0
                    || gaps.first! * timeline.binHours >= 168, "tick at \(tick.label) is not on a round time")
        }
    }

    @Test("daily and weekly bins: each bin sums its hours, a week starts on a Monday (UTC), ticks fit")
    func dailyAndWeeklyBins() throws {
        // 2026-06-10 was a Wednesday: the week holding it starts on Monday 2026-06-08.
        let wednesday = try #require(ISO8601DateFormatter().date(from: "2026-06-10T13:00:00Z"))
        let hours: [AnalyticsSnapshot.Hour] = [.init(hour: wednesday, verified: 2, rejected: 1),
                                               .init(hour: wednesday.addingTimeInterval(5 * 3600), verified: 3, rejected: 0),
                                               .init(hour: wednesday.addingTimeInterval(6 * 86_400), verified: 1, rejected: 4)]
        let until = wednesday.addingTimeInterval(40 * 86_400)
        let weekly = ReportTimeline(hours: hours, since: wednesday, until: until, maximumTicks: ReportCharts.maximumTicks, binning: .week)
        #expect(weekly.binHours == 168 && weekly.binName == "week")
        #expect(weekly.bins.first?.start == ISO8601DateFormatter().date(from: "2026-06-08T00:00:00Z"))
        #expect(weekly.bins.first.map { [$0.verified, $0.rejected] } == [5, 1], "the Wednesday's two hours in one week")
        #expect(weekly.bins.dropFirst().first.map { [$0.verified, $0.rejected] } == [1, 4], "the next Tuesday in the next week")
        #expect(weekly.ticks.count >= 2 && weekly.ticks.count <= ReportCharts.maximumTicks)
        let daily = ReportTimeline(hours: hours, since: wednesday, until: until, maximumTicks: ReportCharts.maximumTicks, binning: .day)
        #expect(daily.binHours == 24 && daily.bins.first.map { [$0.verified, $0.rejected] } == [5, 1])
        #expect(daily.bins.reduce(0) { $0 + $1.verified + $1.rejected } == 11)
        let page = ReportHTML.render(ReportSample.snapshot, generatedAt: ReportSample.generatedAt, binning: .week)
        #expect(page.contains("<h2>Verified vs rejected per week</h2>"))
    }

    @Test("a result from an hour outside the window widens it rather than being dropped")
    func dataOutsideTheWindowIsKept() {
        let late = ReportSample.hour(9)
        let timeline = ReportTimeline(hours: [.init(hour: late, verified: 5, rejected: 0)], since: ReportSample.since,
                                      until: ReportSample.generatedAt, maximumTicks: 14)
        #expect(timeline.bins.count == 10 && timeline.bins.last == .init(start: late, verified: 5, rejected: 0))
    }

    @Test("headline: events, verified share, before a document, top reasons with their meaning, dead letters")
    func headlineFigures() throws {
        let headline = try #require(element(from: "<section id=\"headline\">", to: "</section>", in: html))
        #expect(headline.contains("id=\"figure-events\"><span class=\"value\">38</span>"))
        #expect(headline.contains("id=\"figure-verified-rate\"><span class=\"value\">71.1%</span><span class=\"label\">verified (27 of 38)"))
        #expect(headline.contains("id=\"figure-before-document\"><span class=\"value\">8</span>"))
        let top = try #require(element(from: "<ol id=\"top-reasons\"", to: "</ol>", in: headline))
        let order = ["decryption.unknown_key", "mso.expired", "payload.malformed"].map { top.range(of: "<code>\($0)</code>")?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order == order.sorted { $0! < $1! }, "reasons most first")
        #expect(top.contains("<code>decryption.unknown_key</code> <span class=\"count\">6</span> — No configured key of the tenant can decrypt: "))
        #expect(top.contains("<code>mso.expired</code> <span class=\"count\">&lt;5</span> — Verification time is after the MSO&#39;s <code>validUntil</code></li>"))
        #expect(!top.contains("<code>none</code>"))
        // No dead-letter count exists where the report reads: it says so instead of a number.
        let deadLetters = try #require(element(from: "id=\"figure-dead-letters\"", to: "</div>", in: headline))
        #expect(deadLetters.contains("<span class=\"value\">–</span>") && deadLetters.contains("not recorded in the database"))
        let explanation = try #require(element(from: "<p class=\"note\" id=\"dead-letters\">", to: "</p>", in: headline))
        #expect(explanation.contains("veridoc_dead_letters_total") && explanation.contains("veridoc.requests.dlq"))
    }

    @Test("counts of 1–4 are <5 everywhere; the chart draws them at height 5; the share that would give one away is hidden")
    func suppressionHolds() throws {
        for small in 1...4 {
            #expect(!html.contains(">\(small)<"), "\(small) shown as a number")
            #expect(!html.contains("rejected \(small)<") && !html.contains("verified \(small),"), "\(small) in a bin's title")
        }
        #expect(html.contains("<td><code>mso.expired</code></td><td class=\"n\">&lt;5</td>"))
        // Hour 0: rejected 2, stacked on verified 7; the axis tops at 30 (29 drawn), plot 220 px.
        let first = try #require(element(from: "<g class=\"bin\" data-start=\"\(StatsTable.timestamp(ReportSample.since))\"", to: "</g>", in: html))
        #expect(first.contains("rejected &lt;5") || first.contains("rejected <5"))
        let scale = ReportCharts.axisScale(maximum: 29)
        #expect(scale.top == 30)
        let height = ReportCharts.fmt(Double(Suppression.threshold) / Double(scale.top) * ReportCharts.timelinePlot)
        #expect(first.contains("class=\"small\"") && first.contains("height=\"\(height)\"/>"), "\(first)")

        // 7 verified, 2 rejected: the share and the count would give the 2 away.
        let small = AnalyticsSnapshot(
            since: ReportSample.since, tenant: nil,
            outcomes: [.init(tenant: "t", flow: "f", docType: "d", issuerCountry: "c", verdict: "verified", count: 7),
                       .init(tenant: "t", flow: "f", docType: "d", issuerCountry: "c", verdict: "rejected", count: 2)],
            reasons: [], hours: [], latency: [], hourlyLatency: [])
        #expect(ReportHeadline(small).verifiedRate == nil)
        let smallPage = ReportHTML.render(small, generatedAt: ReportSample.generatedAt)
        #expect(smallPage.contains("verified share hidden") && !smallPage.contains("77.8%"))
    }

    @Test("each reason is explained in the words of reason-codes.md, and the table there explains every code")
    func reasonsExplained() throws {
        let glossary = ReasonGlossary.shared
        let markdown = try String(contentsOf: schemas.appendingPathComponent("reason-codes.md"), encoding: .utf8)
        #expect(ReasonGlossary(markdown: markdown).entries == glossary.entries, "the binary's copy is the repository's")
        #expect(Set(glossary.entries.keys) == Set(ReasonCode.allCases.map(\.rawValue)))
        let table = try #require(element(from: "<table id=\"reason-explanations\">", to: "</table>", in: html))
        for code in ["decryption.unknown_key", "mso.expired", "payload.malformed"] {
            let meaning = try #require(glossary.meaningHTML(code))
            #expect(table.contains("<td><code>\(code)</code></td>") && table.contains(meaning))
        }
        #expect(glossary.meaningHTML("mso.expired") == "Verification time is after the MSO&#39;s <code>validUntil</code>.")
        for code in glossary.entries.keys {
            let summary = try #require(glossary.summaryHTML(code))
            #expect(summary.count <= 200 && occurrences(of: "<code>", in: summary) == occurrences(of: "</code>", in: summary)
                    && occurrences(of: "(", in: summary) == occurrences(of: ")", in: summary), "\(code): \(summary)")
        }
        // A code this binary does not know is named as such, not left bare.
        let unknown = ReportHTML.explanationHTML("stage.new_code")
        #expect(unknown.contains("not in <code>reason-codes.md</code>"))
    }

    @Test("DocType (none) rows are explained as rejected before a document was read")
    func absentDocTypeExplained() throws {
        let note = try #require(element(from: "<p class=\"note\" id=\"no-doctype\">", to: "</p>", in: html))
        #expect(note.contains("rejected before a document was read"))
        #expect(html.range(of: "id=\"no-doctype\"")!.lowerBound < html.range(of: "<table id=\"outcomes\">")!.lowerBound)
        let noneless = AnalyticsSnapshot(since: ReportSample.since, tenant: nil, outcomes: [], reasons: [], hours: [], latency: [], hourlyLatency: [])
        #expect(!ReportHTML.render(noneless, generatedAt: ReportSample.generatedAt).contains("id=\"no-doctype\""))
    }

    @Test("self-contained: no script, no external reference, a policy that refuses any")
    func selfContained() {
        #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"\(ReportHTML.contentSecurityPolicy)\">"))
        #expect(!html.contains("<script") && !html.contains("src=") && !html.contains("href=") && !html.contains("url("))
        let references = ["http:", "https:", "//", "@import"].filter { html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains($0) }
        #expect(references.isEmpty)
    }

    var schemas: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schemas")
    }

    func occurrences(of needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// The text from the first `start` to the `end` after it, both included.
    func element(from start: String, to end: String, in text: String) -> String? {
        guard let open = text.range(of: start), let close = text.range(of: end, range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.lowerBound..<close.upperBound])
    }
}
