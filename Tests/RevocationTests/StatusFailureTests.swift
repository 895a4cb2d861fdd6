import CBOR
import Foundation
import MDoc
import Revocation
import Settings
import TestIssuer
import Testing
import TestSupport
import Verification

/// Every way a list can fail to answer, each undetermined with the step
/// that failed (never valid, never revoked), and rejected under the default
/// `required` mode. The URI and the index appear in no detail.
@Suite struct StatusFailureTests {
    let served: ServedLists
    var server: ListServer { served.server }
    var service: StatusService { served.service }

    init() throws { served = try ServedLists() }

    @Test(arguments: TestIssuer.ListFault.allCases)
    func aListThatCannotAnswerIsUndetermined(_ fault: TestIssuer.ListFault) throws {
        var scenario = try RevocationScenario(seed: 20, server: server)
        let path = "/fail/\(fault.rawValue)"
        let uri = server.url(path)
        if let response = try fault.response(uri: uri, authority: scenario.factory.authority, signer: scenario.signer, now: RevocationScenario.now) {
            server.put(path, ListServer.Answer(status: response.status, contentType: response.contentType, body: response.body))
        }
        let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(TestIssuer.ListFault.index, uri)),
                                               with: try scenario.verifier(), service: service)
        #expect(result.verdict == "rejected" && result.codes == [.statusUndetermined], "\(fault): \(result.codes)")
        #expect(result.documentStatus?.cause == fault.step, "\(fault): \(result.undeterminedDetail ?? "no detail")")
        let detail = try #require(result.undeterminedDetail)
        #expect(detail.contains(": \(fault.step): "), "\(detail)")
        #expect(!detail.contains(uri) && !detail.contains(path) && !detail.contains("127.0.0.1"), "\(detail)")
        if fault != .notFound { #expect(server.requests(path) == 1, "\(fault)") }
    }

    @Test func aDeadServerIsUndeterminedAndNotAskedOncePerEvent() throws {
        var scenario = try RevocationScenario(seed: 21, server: server)
        let gone = try ClosedPort()
        defer { gone.close() }
        let uri = gone.url("/gone")
        let verifier = try scenario.verifier()
        for _ in 0..<3 {
            let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, uri)), with: verifier, service: service)
            #expect(result.codes == [.statusUndetermined] && result.documentStatus?.cause == "fetch")
        }
        #expect(service.fetches == 1, "a failed fetch answers for its list a while")
    }

    @Test func aListPastTheTenantsWaitIsUndeterminedAndThePoolIsNotHeld() throws {
        var scenario = try RevocationScenario(seed: 22, server: server)
        try scenario.publish(.statuses(bits: 1, [0]), at: "/slow")
        server.hold("/slow")
        defer { server.release("/slow") }
        var policy = TenantSettings.StatusPolicy()
        policy.maxWaitSeconds = 1
        let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, server.url("/slow"))),
                                               with: try scenario.verifier(policy), service: service)
        #expect(result.codes == [.statusUndetermined] && result.documentStatus?.cause == "wait")
    }

    @Test func aDocumentSignerMaySignItsOwnListAndANamedCertificateIsUsed() throws {
        var scenario = try RevocationScenario(seed: 23, server: server)
        let authority = scenario.factory.authority
        let own = TestIssuer.ListSigner(key: authority.documentSignerKey, certificate: authority.documentSigner)
        try scenario.publish(.statuses(bits: 1, [0, 1]), at: "/own", signer: own)
        let byDocumentSigner = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(1, server.url("/own"))),
                                                         with: try scenario.verifier(), service: service)
        #expect(byDocumentSigner.codes == [.statusRevoked])

        // The reference names the signer's certificate; the token carries no x5chain.
        server.publish("/named", try {
            let issued = Int64(RevocationScenario.now.timeIntervalSince1970)
            let publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, [0]), subject: server.url("/named"),
                                                     issuedAt: issued - 60, expiresAt: issued + 3_600)
            return try publisher.signed(by: scenario.signer.key, chain: [])
        }(), mediaType: "application/statuslist+cwt")
        let named = RevocationScenario.verify(
            try scenario.event(RevocationScenario.statusListReference(0, server.url("/named"), certificate: scenario.signer.certificate.der)),
            with: try scenario.verifier(), service: service)
        #expect(named.verdict == "verified" && named.documentStatus == .valid)
        // Without the named certificate the same token has no signer.
        let unnamed = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, server.url("/named"))),
                                                with: try scenario.verifier(), service: service)
        #expect(unnamed.documentStatus?.cause == "signer")
    }

    @Test func aListThatChangesIsReadAgainWhenItsTTLRunsOut() throws {
        var scenario = try RevocationScenario(seed: 24, server: server)
        try scenario.publish(.statuses(bits: 1, [0, 0]), at: "/changing") { $0.timeToLive = 1 }
        let verifier = try scenario.verifier()
        let reference = RevocationScenario.statusListReference(1, server.url("/changing"))
        #expect(RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service).documentStatus == .valid)
        try scenario.publish(.statuses(bits: 1, [0, 1]), at: "/changing") { $0.timeToLive = 1 }
        var last: CredentialStatus?
        #expect(try eventually(60) {
            last = RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service).documentStatus
            return last == .revoked
        }, "last: \(String(describing: last))")
        #expect(server.requests("/changing") >= 2)
    }

    @Test func aConditionalRefetchReusesTheListOn304() throws {
        var scenario = try RevocationScenario(seed: 25, server: server)
        server.publish("/etag", try scenario.token(.statuses(bits: 1, [0, 1]), path: "/etag") { $0.timeToLive = 1 },
                       mediaType: "application/statuslist+cwt", etag: "\"v1\"")
        let verifier = try scenario.verifier()
        let reference = RevocationScenario.statusListReference(1, server.url("/etag"))
        #expect(RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service).documentStatus == .revoked)
        #expect(try eventually(60) {
            _ = RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service)
            return server.notModifiedCount >= 1
        })
        #expect(RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service).documentStatus == .revoked)
    }
}
