import Testing
@testable import Verification

/// A report stays small whatever the input: one reason per code, a detail of
/// bounded size that counts the findings past the first few.
@Suite struct CheckReportTests {
    @Test func manyFindingsOfOneCodeAreCountedNotKept() {
        var report = CheckReport()
        for index in 0..<5_000 {
            report.fail(.msoDigests, .msoDigestMismatch, "document \(index): digest mismatch")
        }
        #expect(report.reasons.count == 1)
        let detail = report.reasons[0].detail
        #expect(detail.hasPrefix("document 0: digest mismatch; document 1: digest mismatch; document 2: digest mismatch"))
        #expect(detail.hasSuffix("and \(5_000 - CheckReport.namedFindings) more"), "\(detail)")
        #expect(report.status(of: .msoDigests) == .failed)
    }

    @Test func aRepeatedFindingIsNamedOnce() {
        var report = CheckReport()
        for _ in 0..<10 { report.fail(.issuerChain, .issuerUntrusted, "same") }
        report.fail(.issuerChain, .issuerUntrusted, "other")
        #expect(report.reasons.map(\.detail) == ["same; other"])
    }

    @Test func reasonsStayInCodeOrder() {
        var report = CheckReport()
        report.fail(.requestAge, .requestExpired, "late")
        report.fail(.eventTenant, .eventUnknownTenant, "who")
        report.fail(.msoValidity, .msoExpired, "old")
        #expect(report.reasons.map(\.code) == [.eventUnknownTenant, .msoExpired, .requestExpired])
        #expect(!report.isVerified)
    }

    @Test func aLongDetailIsCutAtACharacterBoundary() {
        // Three-byte characters: the cut lands inside one unless it moves back.
        let long = String(repeating: "€", count: 2_000)
        let reason = Reason(.payloadMalformed, long)
        #expect(reason.detail.utf8.count <= Reason.maxDetailBytes)
        #expect(reason.detail.hasSuffix("…"))
        #expect(reason.detail.dropLast().allSatisfy { $0 == "€" })
        var report = CheckReport()
        report.fail(.payloadStructure, .payloadMalformed, long)
        report.fail(.payloadStructure, .payloadMalformed, long + "x")
        #expect(report.reasons[0].detail.utf8.count <= 3 * Reason.maxDetailBytes + 40)
    }

    @Test func findingSummaryNamesAFewAndCountsAll() {
        var summary = FindingSummary(limit: 2)
        var made = 0
        for index in 0..<100 {
            summary.add({ made += 1; return "e\(index)" }())
        }
        #expect(summary.count == 100)
        #expect(summary.description == "e0, e1 and 98 more")
        #expect(made == 2, "names past the limit are never built")
    }
}
