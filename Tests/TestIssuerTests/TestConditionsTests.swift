import Foundation
import JSON
import MDoc
import Testing
import TestIssuer
import Verification

/// Apple's test conditions (issue 28): the Simulator's and the developer
/// profiles' mock responses, built by Veridoc's own issuer, are accepted by a
/// test tenant with the test marker and a `test_` verdict, and rejected by a
/// production tenant with exactly the codes any such response gets.
@Suite struct TestConditionsTests {
    /// A factory whose merchant is a test tenant's: the Simulator's team ID, or a real one for device profiles.
    static func factory(teamID: String, seed: UInt64) throws -> TestIssuer.EventFactory {
        var factory = try Fixtures.factory(seed: seed)
        factory.merchant = try TestIssuer.Merchant(tenantID: "acme-test", teamID: teamID)
        return factory
    }

    static func options(_ shape: TestIssuer.MockShape?) -> TestIssuer.EventOptions {
        var options = TestIssuer.EventOptions()
        options.mockShape = shape
        return options
    }

    /// The outcome's `data`, as a consumer reads it.
    static func outcomeData(_ result: VerificationResult) throws -> [String: Any] {
        let json = OutcomeEvent(result).json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        // The streamed bytes and the JSON value agree for test outcomes too.
        #expect(json == OutcomeEvent(result).jsonValue.jsonString())
        return try #require(object["data"] as? [String: Any])
    }

    static func statuses(_ result: VerificationResult, _ checks: [CheckName]) -> [CheckStatus] {
        checks.map { result.report.status(of: $0) }
    }

    static let issuerChecks: [CheckName] = [.issuerChain, .issuerCertificate, .issuerSignature]
    static let msoChecks: [CheckName] = [.msoStructure, .msoDocType, .msoValidity, .msoDigests]

    // MARK: the Simulator

    @Test func theSimulatorsShapeIsATestVerdictInATestTenant() throws {
        var factory = try Self.factory(teamID: TestKind.simulatorTeamID, seed: 2801)
        let event = try factory.event(.appleWalletApp, options: Self.options(.simulator))
        let result = Fixtures.verify(event, with: try factory.testVerifier(kinds: [.simulator]))
        #expect(result.codes == [], "\(result.report.reasons.map(\.detail))")
        #expect(result.verdict == "test_verified")
        #expect(result.isAccepted && !result.isVerified && !result.report.isVerified)
        #expect(result.assurance == .test(kind: .simulator))
        // Still checked: pkRHash, infoHash, decryption, the response, the MSO's digests and validity.
        #expect(Self.statuses(result, [.decryptionKey, .decryptionTranscript, .decryptionOpen, .responseDocuments] + Self.msoChecks)
            .allSatisfy { $0 == .passed })
        #expect(Self.statuses(result, Self.issuerChecks + [.deviceAuthentication]).allSatisfy { $0 == .notApplicable })
        let data = try Self.outcomeData(result)
        #expect(data["verdict"] as? String == "test_verified")
        #expect(data["assurance"] as? [String: String] == ["level": "test", "kind": "simulator"])
        let checks = try #require(data["checks"] as? [[String: String]])
        #expect(checks.first { $0["name"] == "issuer.signature" }?["status"] == "not_applicable")
    }

    @Test func theSimulatorsShapeIsRejectedByAProductionTenantAsToday() throws {
        var factory = try Self.factory(teamID: TestKind.simulatorTeamID, seed: 2802)
        let event = try factory.event(.appleWalletApp, options: Self.options(.simulator))
        // A production tenant that even has the Simulator's key and team ID:
        // no issuer certificate, and a device signature that does not verify.
        let production = Fixtures.verify(event, with: try factory.verifier())
        #expect(production.codes == [.issuerUntrusted, .deviceSignatureInvalid])
        #expect(production.verdict == "rejected" && production.assurance == .production)
        #expect(!production.report.checks.contains { $0.status == .notApplicable })
        #expect(try Self.outcomeData(production)["assurance"] == nil)
        // The usual production tenant: its own keys only.
        var other = try Fixtures.factory(seed: 2803)
        other.merchant = try TestIssuer.Merchant(tenantID: "acme-test", teamID: TestKind.simulatorTeamID)
        #expect(Fixtures.verify(event, with: try other.verifier()).codes == [.decryptionUnknownKey])
    }

    @Test("the Simulator's shape still fails the checks that apply to it", arguments: [
        (TestIssuer.Fault.alteredElement, ReasonCode.msoDigestMismatch), (.msoExpired, .msoExpired), (.wrongNonce, .decryptionTranscriptMismatch),
    ])
    func simulatorDefectsAreTestRejections(_ fault: TestIssuer.Fault, _ code: ReasonCode) throws {
        var factory = try Self.factory(teamID: TestKind.simulatorTeamID, seed: 2804)
        let event = try factory.event(.appleWalletApp, options: Self.options(.simulator), fault: fault)
        let result = Fixtures.verify(event, with: try factory.testVerifier(kinds: [.simulator]))
        #expect(result.codes == [code])
        #expect(result.verdict == "test_rejected" && !result.isAccepted)
        // Classified when its documents were read; not, when decryption stopped first.
        #expect(result.assurance == .test(kind: fault == .wrongNonce ? nil : .simulator))
        let data = try Self.outcomeData(result)
        #expect((data["assurance"] as? [String: Any])?["level"] as? String == "test")
    }

    // MARK: developer profiles

    @Test("a developer profile's response is a test verdict in a test tenant", arguments: Flow.allCases)
    func developerProfileIsATestVerdict(_ flow: Flow) throws {
        var factory = try Self.factory(teamID: "TEAM123456", seed: 2810)
        let testVerifier = try factory.testVerifier(kinds: [.developerProfile])

        let signed = Fixtures.verify(try factory.event(flow, options: Self.options(.developerProfile)), with: testVerifier)
        #expect(signed.codes == [], "\(signed.report.reasons.map(\.detail))")
        #expect(signed.verdict == "test_verified" && signed.assurance == .test(kind: .developerProfile))
        // Every check ran: the issuer's against the tenant's test root.
        #expect(!signed.report.checks.contains { $0.status == .notApplicable })
        #expect(signed.report.status(of: .deviceAuthentication) == .passed)

        let unsigned = Fixtures.verify(try factory.event(flow, options: Self.options(.developerProfileWithoutIssuerSignature)), with: testVerifier)
        #expect(unsigned.codes == [], "\(unsigned.report.reasons.map(\.detail))")
        #expect(unsigned.verdict == "test_verified" && unsigned.assurance == .test(kind: .developerProfile))
        #expect(Self.statuses(unsigned, Self.issuerChecks).allSatisfy { $0 == .notApplicable })
        #expect(Self.statuses(unsigned, Self.msoChecks + [.deviceAuthentication]).allSatisfy { $0 == .passed })
        #expect(try Self.outcomeData(unsigned)["assurance"] as? [String: String] == ["level": "test", "kind": "developer-profile"])
    }

    @Test("a developer profile's response is rejected by a production tenant as today", arguments: Flow.allCases)
    func developerProfileIsRejectedByProduction(_ flow: Flow) throws {
        var factory = try Self.factory(teamID: "TEAM123456", seed: 2811)
        // Production trusts its own IACA, not the test root.
        let production = try factory.merchant.verifier(trusting: [try TestIssuer.Authority(now: Fixtures.now, name: "Production").iaca])
        let signed = Fixtures.verify(try factory.event(flow, options: Self.options(.developerProfile)), with: production)
        #expect(signed.codes == [.issuerUntrusted] && signed.verdict == "rejected" && signed.assurance == .production)
        let unsigned = Fixtures.verify(try factory.event(flow, options: Self.options(.developerProfileWithoutIssuerSignature)), with: production)
        #expect(unsigned.codes == [.issuerUntrusted, .issuerSignatureInvalid] && unsigned.verdict == "rejected")
        // Even where production (wrongly) trusts the test root, a zero issuer signature does not verify.
        let trusting = Fixtures.verify(try factory.event(flow, options: Self.options(.developerProfileWithoutIssuerSignature)), with: try factory.verifier())
        #expect(trusting.codes == [.issuerSignatureInvalid] && trusting.verdict == "rejected")
    }

    // MARK: strictness

    @Test func aShapeOfAKindTheTenantDoesNotEnableIsRejected() throws {
        var simulator = try Self.factory(teamID: TestKind.simulatorTeamID, seed: 2820)
        let zeroes = try simulator.event(.appleWalletApp, options: Self.options(.simulator))
        let deviceOnly = Fixtures.verify(zeroes, with: try simulator.testVerifier(kinds: [.developerProfile]))
        #expect(deviceOnly.codes == [.issuerUntrusted, .deviceSignatureInvalid])
        #expect(deviceOnly.verdict == "test_rejected" && deviceOnly.assurance == .test(kind: nil))
        // A real device signature beside a zero issuer signature is no Simulator response.
        let mixed = try simulator.event(.appleWalletApp, options: Self.options(.developerProfileWithoutIssuerSignature))
        let simulatorOnly = Fixtures.verify(mixed, with: try simulator.testVerifier(kinds: [.simulator]))
        #expect(simulatorOnly.codes == [.issuerSignatureInvalid] && simulatorOnly.verdict == "test_rejected")
    }

    @Test func theSimulatorsShapeNeedsTheSimulatorsTeamID() throws {
        var factory = try Self.factory(teamID: "TEAM123456", seed: 2821)
        #expect(throws: TestIssuer.FixtureError.self) { try factory.event(.appleWalletApp, options: Self.options(.simulator)) }
        #expect(throws: TestIssuer.FixtureError.self) { try factory.event(.appleWalletWeb, options: Self.options(.simulator)) }
    }

    /// A production-shaped valid response sent to a test tenant is a test
    /// outcome like any other: checked against the test roots only, and
    /// never a production verdict.
    @Test func aProductionResponseToATestTenantIsNeverProductionAssurance() throws {
        var factory = try Self.factory(teamID: "TEAM123456", seed: 2822)
        let event = try factory.event(.appleWalletApp)
        let sameRoot = Fixtures.verify(event, with: try factory.testVerifier())
        #expect(sameRoot.verdict == "test_verified" && !sameRoot.isVerified && sameRoot.assurance == .test(kind: .developerProfile))
        let otherRoot = try factory.merchant.tenant(
            trusting: [try TestIssuer.Authority(now: Fixtures.now, name: "Apple Test").iaca], testConditions: TestConditions(kinds: [.developerProfile]))
        let rejected = Fixtures.verify(event, with: Verifier(directory: TenantDirectory([otherRoot])))
        #expect(rejected.codes == [.issuerUntrusted] && rejected.verdict == "test_rejected")
    }

    /// Whatever a test tenant's outcome says, no field equals its production
    /// counterpart's: the verdict is never "verified" or "rejected", and the
    /// marker is there, also for events refused before their tenant was checked.
    @Test func everyOutcomeOfATestTenantIsMarked() throws {
        var factory = try Self.factory(teamID: TestKind.simulatorTeamID, seed: 2823)
        let verifier = try factory.testVerifier()
        var events = [try factory.event(.appleWalletApp, options: Self.options(.simulator))]
        for fault in TestIssuer.Fault.allCases where fault != .unknownTenant {
            for flow in fault.flows { events.append(try factory.event(flow, fault: fault)) }
        }
        for event in events {
            let result = Fixtures.verify(event, with: verifier)
            #expect(result.verdict.hasPrefix("test_"), "\(event.fault.map(\.rawValue) ?? "valid") \(event.flow.rawValue): \(result.verdict)")
            #expect(result.assurance.isTest && !result.isVerified)
            #expect((try Self.outcomeData(result)["assurance"] as? [String: Any])?["level"] as? String == "test")
        }
    }
}
