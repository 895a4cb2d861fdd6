import JSON
import MDoc
import TestIssuer
import Testing
import Verification

/// Every reason code the verifier can reach on its own has a fixture, and each
/// fixture causes exactly the reasons it promises, through JSON events.
@Suite struct ReasonCodeFixtureTests {
    /// Iterates `ReasonCode.allCases` so that a new code without a fixture fails here.
    /// The status codes are recorded by the status service, once lists are
    /// read (StatusCheckTests, RevocationTests).
    /// `issuer.doctype_not_authorized` needs a tenant that trusts the IACA
    /// through a VICAL, which the factory's tenant (and the worker configs
    /// made from it) does not: its fixtures are VICALs made by
    /// `TestIssuer.TrustList` (VICALScopeTests, VerifyCommandTests).
    @Test("a fault produces each reason code the verifier reports on its own",
          arguments: ReasonCode.allCases.filter {
              !RequestNonceCheck.reasons.contains($0) && !DocumentStatusCheck.reasons.contains($0) && $0 != .issuerDoctypeNotAuthorized
          })
    func everyReasonCodeHasAFixture(_ code: ReasonCode) throws {
        let builds = TestIssuer.Fault.allCases.flatMap { fault in
            fault.flows.filter { fault.expectedReasons(for: $0)!.contains(code) }.map { (fault, $0) }
        }
        #expect(!builds.isEmpty, "no TestIssuer.Fault produces \(code.rawValue)")

        var factory = try Fixtures.factory(seed: UInt64(ReasonCode.allCases.firstIndex(of: code)!))
        let verifier = try factory.verifier()
        for (fault, flow) in builds {
            let event = try factory.event(flow, fault: fault)
            let result = Fixtures.verify(event, with: verifier)
            #expect(result.codes == event.expectedReasons, "\(fault) in \(flow.rawValue): \(result.report.reasons.map { "\($0.code.rawValue): \($0.detail)" })")
            #expect(result.codes.contains(code))
            #expect(result.verdict == "rejected")
            #expect(!result.isVerified)
        }
    }

    /// `request.nonce_reused` is set when a result is stored, by the nonce
    /// store (the pipeline tests replay real events through it): a verified
    /// event of every flow whose nonce was used before becomes a rejection
    /// with that one reason, its other checks as they were.
    @Test("a nonce used before turns a verified result into request.nonce_reused", arguments: Flow.allCases)
    func reusedNonceIsItsOwnReason(_ flow: Flow) throws {
        var factory = try Fixtures.factory(seed: 91)
        let verifier = try factory.verifier()
        let result = Fixtures.verify(try factory.event(flow), with: verifier)
        #expect(result.isVerified, "\(result.report.reasons.map(\.detail))")
        #expect(result.report.status(of: .requestNonce) == .skipped)
        let first = result.recordingNonceCheck(reused: false)
        #expect(first.isVerified && first.report.status(of: .requestNonce) == .passed)
        let replay = result.recordingNonceCheck(reused: true)
        #expect(replay.verdict == "rejected" && !replay.isVerified)
        #expect(replay.report.reasons.map(\.code) == [.requestNonceReused])
        #expect(replay.report.status(of: .requestNonce) == .failed)
        for check in CheckName.order where check != .requestNonce {
            #expect(replay.report.status(of: check) == result.report.status(of: check), "\(check.rawValue)")
        }
    }

    @Test("every fault applies to at least one flow and expects one code there")
    func faultsAreWellFormed() {
        for fault in TestIssuer.Fault.allCases {
            #expect(!fault.flows.isEmpty, "\(fault)")
            for flow in fault.flows { #expect(fault.expectedReasons(for: flow)?.count == 1, "\(fault) \(flow)") }
        }
    }

    @Test("a fault that does not exist in a flow is refused, not silently built valid")
    func inapplicableFaultThrows() throws {
        var factory = try Fixtures.factory()
        #expect(throws: TestIssuer.FixtureError.self) { try factory.event(.isoDeviceResponse, fault: .flippedCiphertext) }
        var options = TestIssuer.EventOptions()
        options.deviceMac = true
        #expect(throws: TestIssuer.FixtureError.self) { try factory.event(.appleWalletApp, options: options) }
    }

    @Test("event.invalid keeps what could be attributed")
    func invalidEventsAreAttributed() throws {
        var factory = try Fixtures.factory()
        let verifier = try factory.verifier()
        let missingID = Fixtures.verify(try factory.event(.appleWalletApp, fault: .missingEventID), with: verifier)
        #expect(missingID.requestID == nil)
        #expect(missingID.tenant == factory.merchant.tenantID)
        #expect(missingID.flow == .appleWalletApp)
        let badBase64 = try factory.event(.appleWalletWeb, fault: .malformedBase64)
        let result = Fixtures.verify(badBase64, with: verifier)
        #expect(result.requestID == badBase64.id)
        #expect(result.report.reasons.first?.detail.contains("data.response") == true)
    }
}
