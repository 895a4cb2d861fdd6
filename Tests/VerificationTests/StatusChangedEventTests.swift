import Foundation
import JSON
import Testing
import TestSupport
@testable import Verification

/// `veridoc.credential.status-changed.v1`: its id follows from the request
/// and the new state (found again, the same event), and the committed
/// example beside its schema is what the type writes.
@Suite struct StatusChangedEventTests {
    static let example = StatusChangedEvent(
        requestID: "7f0c2a4e-1b7d-4c41-9d1e-3f8a2b6c9d10", tenant: "acme", document: 0, status: "revoked", acceptedStatus: "valid",
        detectedAt: Date(timeIntervalSince1970: 1_750_003_600))

    @Test func theIdFollowsFromTheRequestAndTheNewState() {
        let id = StatusChangedEvent.id(forRequest: "r1", status: "revoked")
        #expect(id == StatusChangedEvent.id(forRequest: "r1", status: "revoked"))
        #expect(id != StatusChangedEvent.id(forRequest: "r1", status: "suspended"))
        #expect(id != StatusChangedEvent.id(forRequest: "r2", status: "revoked"))
        #expect(id != OutcomeEvent.id(forRequest: "r1"), "never the outcome's id")
        #expect(id.count == 36 && id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
    }

    @Test func theCommittedExampleIsWhatTheTypeWrites() throws {
        let committed = try JSONParser().parse(Array(try Data(contentsOf: Binaries.repository.appendingPathComponent("Schemas/examples/credential-status-changed.json"))))
        #expect(committed.jsonString() == Self.example.json())
    }
}
