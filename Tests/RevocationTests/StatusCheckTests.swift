import Foundation
import MDoc
import Revocation
import Settings
import Synchronization
import TestIssuer
import Testing
import TestSupport
import Verification

/// `document.status` end to end: documents whose MSO names a list served
/// over real HTTP by a test issuer, verified and resolved by the status
/// service, for every answer a list can give and every way one can fail.
@Suite struct StatusCheckTests {
    let served: ServedLists
    var server: ListServer { served.server }
    var service: StatusService { served.service }

    init() throws { served = try ServedLists() }

    @Test(arguments: [(UInt8(0), CredentialStatus.valid), (1, .revoked), (2, .suspended)])
    func aStatusListEntryDecides(_ value: UInt8, _ expected: CredentialStatus) throws {
        var scenario = try RevocationScenario(seed: 1, server: server)
        var entries = [UInt8](repeating: 0, count: 64)
        entries[13] = value
        try scenario.publish(.statuses(bits: 2, entries), at: "/lists/a")
        let event = try scenario.event(RevocationScenario.statusListReference(13, server.url("/lists/a")))
        let result = RevocationScenario.verify(event, with: try scenario.verifier(), service: service)
        #expect(result.documentStatus == expected)
        #expect(result.status == expected)
        switch expected {
        case .valid:
            #expect(result.verdict == "verified" && result.codes.isEmpty)
            #expect(result.report.status(of: .documentStatus) == .passed)
        case .revoked: #expect(result.verdict == "rejected" && result.codes == [.statusRevoked])
        default: #expect(result.verdict == "rejected" && result.codes == [.statusSuspended])
        }
        #expect(server.requests("/lists/a") == 1)
    }

    @Test func anIdentifierListRevokesExactlyTheIdsItHolds() throws {
        var scenario = try RevocationScenario(seed: 2, server: server)
        let listed: [UInt8] = Array(repeating: 0x11, count: 32)
        try scenario.publish(.identifiers([listed, Array(repeating: 0x22, count: 32)]), kind: .identifierList, at: "/ids")
        let verifier = try scenario.verifier()
        let revoked = RevocationScenario.verify(try scenario.event(RevocationScenario.identifierListReference(listed, server.url("/ids"))),
                                                with: verifier, service: service)
        #expect(revoked.codes == [.statusRevoked] && revoked.documentStatus == .revoked)
        // One byte shorter is another identifier.
        let other = RevocationScenario.verify(try scenario.event(RevocationScenario.identifierListReference(Array(listed.dropLast()), server.url("/ids"))),
                                              with: verifier, service: service)
        #expect(other.verdict == "verified" && other.documentStatus == .valid)
        #expect(server.requests("/ids") == 1, "the second event is answered from the cache")
    }

    @Test func bothReferencesAreCheckedAndEitherRevokes() throws {
        var scenario = try RevocationScenario(seed: 3, server: server)
        try scenario.publish(.statuses(bits: 1, [0, 0, 0, 0, 0, 0, 0, 0]), at: "/both/status")
        try scenario.publish(.identifiers([[7, 7, 7]]), kind: .identifierList, at: "/both/ids")
        let reference = MSOStatus(statusList: .init(index: 3, uri: server.url("/both/status")), identifierList: .init(id: [7, 7, 7], uri: server.url("/both/ids")))
        let result = RevocationScenario.verify(try scenario.event(reference), with: try scenario.verifier(), service: service)
        #expect(result.codes == [.statusRevoked])
        #expect(server.requests("/both/status") == 1 && server.requests("/both/ids") == 1)
    }

    @Test func aDocumentWithoutAReferenceVerifiesAsBeforeAndSaysNone() throws {
        var scenario = try RevocationScenario(seed: 4, server: server)
        let result = RevocationScenario.verify(try scenario.event(nil), with: try scenario.verifier(), service: service)
        #expect(result.verdict == "verified" && result.documentStatus == CredentialStatus.none)
        #expect(result.report.status(of: .documentStatus) == .skipped)
    }

    @Test func modeOffFetchesNothingAndSaysNotChecked() throws {
        var scenario = try RevocationScenario(seed: 5, server: server)
        try scenario.publish(.statuses(bits: 1, [1, 1, 1, 1, 1, 1, 1, 1]), at: "/off")
        var policy = TenantSettings.StatusPolicy()
        policy.mode = .off
        let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, server.url("/off"))),
                                               with: try scenario.verifier(policy), service: service)
        #expect(result.verdict == "verified" && result.documentStatus == .notChecked && result.status == .notChecked)
        #expect(server.requests("/off") == 0)
    }

    @Test func bestEffortVerifiesAnUndeterminedStatusAndSaysSo() throws {
        var scenario = try RevocationScenario(seed: 6, server: server)
        var policy = TenantSettings.StatusPolicy()
        policy.mode = .bestEffort
        // Nothing is published at this path: 404.
        let event = try scenario.event(RevocationScenario.statusListReference(0, server.url("/missing")))
        let result = RevocationScenario.verify(event, with: try scenario.verifier(policy), service: service)
        #expect(result.verdict == "verified")
        #expect(result.status?.word == "undetermined" && result.documentStatus?.cause == "http_status")
        // Revoked still rejects in bestEffort.
        try scenario.publish(.statuses(bits: 1, [1]), at: "/best/revoked")
        let revoked = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, server.url("/best/revoked"))),
                                                with: try scenario.verifier(policy), service: service)
        #expect(revoked.codes == [.statusRevoked])
    }

    /// The URI is the sender's until the issuer signature vouches for it:
    /// a document whose issuer checks fail, or an event rejected for another
    /// reason, makes no request at all.
    @Test(arguments: [TestIssuer.Fault.flippedIssuerSignature, .untrustedIssuer, .msoExpired, .staleRequest])
    func nothingIsFetchedForARejectedEvent(_ fault: TestIssuer.Fault) throws {
        var scenario = try RevocationScenario(seed: 7, server: server)
        let path = "/never/\(fault)"
        try scenario.publish(.statuses(bits: 1, [0]), at: path)
        let event = try scenario.event(RevocationScenario.statusListReference(0, server.url(path)), flow: fault.flows.first!, fault: fault)
        let result = RevocationScenario.verify(event, with: try scenario.verifier(), service: service)
        #expect(result.verdict == "rejected")
        #expect(!result.codes.contains { DocumentStatusCheck.reasons.contains($0) })
        #expect(server.requests(path) == 0, "\(fault): the list was fetched for a rejected event")
    }

    @Test func aLoopbackURIIsNeverContactedWhenInsecureIsNotAllowed() throws {
        var scenario = try RevocationScenario(seed: 8, server: server)
        try scenario.publish(.statuses(bits: 1, [0]), at: "/private")
        let strict = RevocationScenario.service(allowInsecure: false)
        defer { strict.stop() }
        for uri in [server.url("/private"), server.url("/private", scheme: "https")] {
            let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, uri)), with: try scenario.verifier(), service: strict)
            #expect(result.codes == [.statusUndetermined], "\(uri)")
            #expect(result.undeterminedDetail?.contains(": fetch: ") == true, "\(result.undeterminedDetail ?? "")")
        }
        #expect(server.requests("/private") == 0)
    }

    @Test func manyEventsWaitingForOneColdListCauseOneFetch() throws {
        var scenario = try RevocationScenario(seed: 9, server: server)
        try scenario.publish(.statuses(bits: 1, [UInt8](repeating: 0, count: 1024)), at: "/cold")
        server.hold("/cold")
        let verifier = try scenario.verifier()
        let results = Mutex<[VerificationResult]>([])
        let queries = try (0..<200).map { index in
            verifier.verify(eventJSON: try scenario.event(RevocationScenario.statusListReference(UInt64(index), server.url("/cold"))).json(), at: RevocationScenario.now)
        }
        let done = DispatchGroup()
        for result in queries {
            done.enter()
            service.resolve(result.pendingStatusQueries, at: RevocationScenario.now) { answers in
                results.withLock { $0.append(result.recordingStatus(answers)) }
                done.leave()
            }
        }
        // Every query is waiting on the one held request before it is released.
        #expect(eventually(120) { server.requests("/cold") == 1 })
        server.release("/cold")
        done.wait()
        #expect(results.withLock { $0.count } == 200)
        #expect(results.withLock { $0.allSatisfy { $0.verdict == "verified" } })
        #expect(server.requests("/cold") == 1)
        #expect(service.fetches == 1)
    }
}
