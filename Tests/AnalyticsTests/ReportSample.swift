import Foundation
@testable import Analytics
@testable import Storage

/// A report's data built by hand: six hours from `since`, results in two of
/// them, small counts to suppress, a reason of each stage, and rejections
/// before a document was read.
enum ReportSample {
    static let since = Date(timeIntervalSince1970: 1_750_000_000 - 1_750_000_000.truncatingRemainder(dividingBy: 3600))  // 2025-06-15T15:00Z
    static let generatedAt = since.addingTimeInterval(5.5 * 3600)

    static func hour(_ offset: Int) -> Date { since.addingTimeInterval(Double(offset) * 3600) }

    static let snapshot = AnalyticsSnapshot(
        since: since, tenant: nil,
        outcomes: [.init(tenant: "acme", flow: "apple-wallet-app", docType: "org.iso.18013.5.1.mDL", issuerCountry: "US", verdict: "verified", count: 27),
                   .init(tenant: "acme", flow: "apple-wallet-app", docType: "org.iso.18013.5.1.mDL", issuerCountry: "US", verdict: "rejected", count: 3),
                   .init(tenant: "acme", flow: "apple-wallet-app", docType: "(none)", issuerCountry: "(none)", verdict: "rejected", count: 8)],
        reasons: [.init(tenant: "acme", flow: "apple-wallet-app", reason: "none", count: 27),
                  .init(tenant: "acme", flow: "apple-wallet-app", reason: "decryption.unknown_key", count: 6),
                  .init(tenant: "acme", flow: "apple-wallet-app", reason: "mso.expired", count: 3),
                  .init(tenant: "acme", flow: "apple-wallet-app", reason: "payload.malformed", count: 2)],
        hours: [.init(hour: hour(0), verified: 7, rejected: 2), .init(hour: hour(3), verified: 20, rejected: 9)],
        latency: [.init(hour: nil, tenant: "acme", flow: "apple-wallet-app", count: 38, p50: 0.012, p90: 0.02, p99: 0.041)],
        hourlyLatency: [.init(hour: hour(0), tenant: "acme", flow: "apple-wallet-app", count: 9, p50: 0.01, p90: 0.02, p99: 0.03)])

    static var html: String { ReportHTML.render(snapshot, generatedAt: generatedAt) }
}
