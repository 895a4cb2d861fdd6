import CBOR
import Testing
import TestIssuer
import Verification

/// The CBOR limits hold for a whole event, not for each nested decode.
@Suite struct EventBudgetTests {
    @Test func nestedItemsShareOneBudgetPerEvent() throws {
        let events = try TestIssuer.HostileEvents(now: Lab.now, seed: 5)
        // Five IssuerSignedItems, each holding an array of 1,000 values: about
        // 5,000 items in all, each tag-24 content well under 3,000.
        let event = try events.event(.tag24Items, count: 5)
        var verifier = try events.verifier()
        let generous = verifier.verify(eventJSON: event, at: events.now)
        #expect(!generous.report.reasons.contains { $0.code == .payloadMalformed }, "\(generous.report.reasons)")
        verifier.cborLimits = CBORDecoder.Limits(maxItems: 3_000)
        let budgeted = verifier.verify(eventJSON: event, at: events.now)
        #expect(budgeted.report.reasons.map(\.code) == [.payloadMalformed], "\(budgeted.report.reasons)")
        #expect(budgeted.report.reasons.first?.detail.contains("nested structures included") == true, "\(budgeted.report.reasons)")
        // A normal event fits the same budget.
        var lab = try Lab()
        var small = try lab.factory.verifier()
        small.cborLimits = CBORDecoder.Limits(maxItems: 3_000)
        #expect(small.verify(eventJSON: try lab.factory.event(.isoDeviceResponse).json(), at: Lab.now).isVerified)
    }
}
