import CBOR
import MDoc
import JSON
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

/// Objects of an event are bounded in members, in the fast reader and the general one alike.
@Suite struct EventMemberLimitTests {
    static func withAttributes(_ count: Int, _ json: [UInt8]) -> [UInt8] {
        let members = (0..<count).flatMap { Array("\"x\($0)\":\"v\",".utf8) }
        return [json[0]] + members + json.dropFirst()
    }

    @Test func extensionAttributesPastTheLimitAreRefusedAtOnce() throws {
        var lab = try Lab()
        let event = try lab.factory.event(.isoDeviceResponse).json()
        let members = try JSONParser().parse(event).objectValue?.count ?? 0
        let fits = EventParser.maxObjectMembers - members
        for (json, expected) in [(Self.withAttributes(fits, event), [ReasonCode]()), (Self.withAttributes(fits + 1, event), [.eventInvalid])] {
            let result = lab.verifier.verify(eventJSON: json, at: Lab.now)
            #expect(result.report.reasons.map(\.code) == expected, "\(result.report.reasons)")
            // The fast reader declines what the general one refuses, and reads what it reads alike.
            let fast = EventParser().commonForm(json)
            #expect((fast != nil) == expected.isEmpty)
        }
        let refused = lab.verifier.verify(eventJSON: Self.withAttributes(300_000, event), at: Lab.now)
        #expect(refused.report.reasons.first?.detail.contains("more than \(EventParser.maxObjectMembers) members") == true)
    }
}
