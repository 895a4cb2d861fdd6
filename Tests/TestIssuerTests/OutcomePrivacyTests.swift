import CBOR
import Foundation
import MDoc
import Testing
import JSON
import TestIssuer
import Verification

/// Outcomes name elements but never carry their values, the nonce or keys,
/// whatever the verdict; and their id follows the request id alone.
@Suite struct OutcomePrivacyTests {
    static let planted: [(identifier: String, value: CBOR, text: String)] = [
        ("family_name", "Zyxwvutsrq-PLANTED", "Zyxwvutsrq-PLANTED"),
        ("given_name", "Qponmlkjih-PLANTED", "Qponmlkjih-PLANTED"),
        ("document_number", "PLANTED-99887766", "PLANTED-99887766"),
        ("birth_date", .tagged(1004, "1931-07-04"), "1931-07-04"),
        ("issuing_authority", "Plantedville Motor Vehicles", "Plantedville"),
    ]

    static func plantedFactory(seed: UInt64) throws -> TestIssuer.EventFactory {
        var factory = try Fixtures.factory(seed: seed)
        for (identifier, value, _) in planted { factory.credential[TestIssuer.Credential.mDLNameSpace, identifier] = value }
        return factory
    }

    static func assertNoPlantedValue(in text: String, _ context: String) {
        for (_, _, value) in planted + [("", "", TestIssuer.Fault.alteredFamilyName)] {
            #expect(!text.contains(value), "\(context): outcome contains \(value)")
        }
    }

    @Test("verified outcomes list elements without values", arguments: Flow.allCases)
    func verifiedOutcome(_ flow: Flow) throws {
        var factory = try Self.plantedFactory(seed: 300)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.requestedElements = [RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "family_name", retention: .mayStore(days: 30))]
        let event = try factory.event(flow, options: options)
        let result = Fixtures.verify(event, with: verifier)
        #expect(result.isVerified)
        // The values did reach the verifier, so their absence below means something.
        let disclosed = try #require(result.documents.first?.elements.first { $0.identifier == "family_name" })
        #expect(disclosed.value?.text == "Zyxwvutsrq-PLANTED")

        let json = OutcomeEvent(result).json()
        Self.assertNoPlantedValue(in: json, flow.rawValue)
        #expect(json.contains("\"family_name\""))
        #expect(json.contains("\"days\":30"))
        if let nonce = event.data["nonce"] { #expect(!json.contains(nonce)) }
        #expect(!json.contains(factory.merchant.currentKey.publicKey.pem.split(separator: "\n")[1]))
    }

    @Test("rejected outcomes and their reason details carry no values", arguments: TestIssuer.Fault.allCases)
    func rejectedOutcome(_ fault: TestIssuer.Fault) throws {
        var factory = try Self.plantedFactory(seed: 301)
        for (flow, result) in try Fixtures.verifyEach(fault, from: &factory) {
            #expect(!result.isVerified)
            Self.assertNoPlantedValue(in: OutcomeEvent(result).json(), "\(fault) \(flow.rawValue)")
            Self.assertNoPlantedValue(in: result.report.reasons.map(\.detail).joined(separator: "\n"), "\(fault) \(flow.rawValue) details")
        }
    }

    @Test("the outcome id depends on the request id only")
    func outcomeID() throws {
        var factory = try Fixtures.factory(seed: 302)
        let verifier = try factory.verifier()
        let event = try factory.event(.appleWalletApp)
        let first = OutcomeEvent(Fixtures.verify(event, with: verifier)).jsonValue["id"]?.stringValue
        let redelivered = OutcomeEvent(verifier.verify(eventJSON: event.json(), at: Fixtures.now + 30)).jsonValue["id"]?.stringValue
        #expect(first != nil && first == redelivered)
        // A rejected redelivery of the same id (here: stale) still maps to the same outcome id.
        let stale = OutcomeEvent(verifier.verify(eventJSON: event.json(), at: Fixtures.now + 3_600))
        #expect(stale.result.codes == [.requestExpired])
        #expect(stale.jsonValue["id"]?.stringValue == first)
        let other = OutcomeEvent(Fixtures.verify(try factory.event(.appleWalletApp), with: verifier)).jsonValue["id"]?.stringValue
        #expect(other != nil && other != first)
        #expect(OutcomeEvent.id(forRequest: "a") != OutcomeEvent.id(forRequest: "b"))
    }

    /// Outcome ids are idempotency keys stored in the outbox and downstream:
    /// they must never change between releases (values from Python's hashlib).
    @Test func outcomeIDsAreStable() {
        #expect(OutcomeEvent.id(forRequest: "req-1") == "f549f220-f1b1-8250-a302-2854a4103a83")
        #expect(OutcomeEvent.id(forRequest: "é-ü 🎉") == "a2462c65-556e-8843-9807-59b7324faab3")
    }
}
