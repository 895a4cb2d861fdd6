import Foundation
import Testing
@testable import Analytics
import CommandLineSupport
@testable import Storage

struct DisplayTests {
    let now = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15T15:06:40Z

    @Test func smallCountsAreSuppressed() {
        #expect(Suppression.display(0) == "0")
        #expect((1...4).allSatisfy { Suppression.display($0) == "<5" })
        #expect(Suppression.display(5) == "5")
        #expect(Suppression.display(123) == "123")
    }

    @Test func reportIsSelfContainedAndSuppresses() {
        let hour = Date(timeIntervalSince1970: 1_750_000_000 - 1_750_000_000.truncatingRemainder(dividingBy: 3600))
        let snapshot = AnalyticsSnapshot(
            since: hour, tenant: nil,
            outcomes: [.init(tenant: "acme", flow: "apple-wallet-app", docType: "mDL", issuerCountry: "US", verdict: "verified", count: 7),
                       .init(tenant: "acme", flow: "apple-wallet-app", docType: "mDL", issuerCountry: "US", verdict: "rejected", count: 2)],
            reasons: [.init(tenant: "acme", flow: "apple-wallet-app", reason: "mso.expired", count: 2)],
            hours: [.init(hour: hour, verified: 7, rejected: 2)],
            latency: [.init(hour: nil, tenant: "acme", flow: "apple-wallet-app", count: 9, p50: 0.01, p90: 0.02, p99: 0.03)],
            hourlyLatency: [])
        let html = ReportHTML.render(snapshot)
        #expect(html.contains("<svg"))
        #expect(!html.contains("http://") || !html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http://"))
        #expect(!html.contains("<script") && !html.contains("src=") && !html.contains("href="))
        #expect(html.contains("<td>verified</td><td class=\"n\">7</td>"))
        #expect(html.contains("<td>rejected</td><td class=\"n\">&lt;5</td>"))
        #expect(!html.contains(">2<"))
        let text = StatsTable.render(snapshot)
        #expect(text.contains("<5"))
        #expect(ReportHTML.escape("<a href=\"x\">&") == "&lt;a href=&quot;x&quot;&gt;&amp;")
    }

    @Test func sinceWindowDurations() {
        #expect(ParsedArguments.duration("90s") == 90)
        #expect(ParsedArguments.duration("15m") == 900)
        #expect(ParsedArguments.duration("24h") == 86_400)
        #expect(ParsedArguments.duration("7d") == 604_800)
        #expect(ParsedArguments.duration("7x") == nil)
    }
}
