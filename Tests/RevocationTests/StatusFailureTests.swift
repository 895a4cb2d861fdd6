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

    /// What a test serves at the document's list path.
    enum Serving: String, CaseIterable {
        case notFound, serverError, indexPastTheEnd, expiredList, futureIssuedAt, wrongSubject, wrongType, identifierListForAStatusList
        case jwtMediaType, jwtBytes, untagged, mac, anotherIACAsSigner, signerWithoutProfile, zlibBomb, oversizedBody, unknownStatusValue
        case missingExpiry

        var step: String {
            switch self {
            case .notFound, .serverError: "http_status"
            case .indexPastTheEnd: "index"
            case .expiredList, .missingExpiry: "exp"
            case .futureIssuedAt: "iat"
            case .wrongSubject: "sub"
            case .wrongType, .identifierListForAStatusList, .jwtMediaType: "media_type"
            case .jwtBytes, .untagged: "token"
            case .mac: "mac"
            case .anotherIACAsSigner, .signerWithoutProfile: "signer"
            case .zlibBomb: "decompression"
            case .oversizedBody: "too_large"
            case .unknownStatusValue: "value"
            }
        }
    }

    @Test(arguments: Serving.allCases)
    func aListThatCannotAnswerIsUndetermined(_ serving: Serving) throws {
        var scenario = try RevocationScenario(seed: 20, server: server)
        let path = "/fail/\(serving.rawValue)"
        let index: UInt64 = 5
        try serve(serving, at: path, scenario: scenario)
        let uri = server.url(path)
        let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(index, uri)), with: try scenario.verifier(), service: service)
        #expect(result.verdict == "rejected" && result.codes == [.statusUndetermined], "\(serving): \(result.codes)")
        #expect(result.documentStatus?.cause == serving.step, "\(serving): \(result.undeterminedDetail ?? "no detail")")
        let detail = try #require(result.undeterminedDetail)
        #expect(detail.contains(": \(serving.step): "), "\(detail)")
        #expect(!detail.contains(uri) && !detail.contains(path) && !detail.contains("127.0.0.1"), "\(detail)")
        if serving != .notFound { #expect(server.requests(path) == 1, "\(serving)") }
    }

    private func serve(_ serving: Serving, at path: String, scenario: RevocationScenario) throws {
        let entries = [UInt8](repeating: 0, count: 16)
        let now = Int64(RevocationScenario.now.timeIntervalSince1970)
        switch serving {
        case .notFound: break
        case .serverError: server.put(path, ListServer.Answer(status: 500, body: Array("oops".utf8)))
        case .indexPastTheEnd: try scenario.publish(.statuses(bits: 8, [0, 0, 0, 0, 0]), at: path)
        case .expiredList: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.issuedAt = now - 7_200; $0.expiresAt = now - 60 }
        case .missingExpiry: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.expiresAt = nil }
        case .futureIssuedAt: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.issuedAt = now + 3_600 }
        case .wrongSubject: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.subject = server.url(path + "x") }
        case .wrongType: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.type = .text("application/cwt") }
        case .identifierListForAStatusList:
            // An identifier list where a status list was named: its typ is the other kind's.
            server.publish(path, try scenario.token(.identifiers([[1]]), kind: .identifierList, path: path), mediaType: "application/statuslist+cwt")
        case .jwtMediaType:
            server.put(path, ListServer.Answer(contentType: "application/statuslist+jwt", body: Array("eyJhbGciOiJFUzI1NiJ9.e30.c2ln".utf8)))
        case .jwtBytes:
            server.publish(path, Array("eyJhbGciOiJFUzI1NiJ9.e30.c2ln".utf8), mediaType: "application/statuslist+cwt")
        case .untagged: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.tag = nil }
        case .mac: try scenario.publish(.statuses(bits: 1, entries), at: path) { $0.tag = 17 }
        case .anotherIACAsSigner:
            let other = try TestIssuer.Authority(now: RevocationScenario.now, name: "Other Issuer", state: "NV")
            try scenario.publish(.statuses(bits: 1, entries), at: path, signer: try other.issuingListSigner(now: RevocationScenario.now))
        case .signerWithoutProfile:
            try scenario.publish(.statuses(bits: 1, entries), at: path,
                                 signer: try scenario.factory.authority.issuingListSigner(now: RevocationScenario.now, extendedKeyUsage: nil))
        case .zlibBomb:
            try scenario.publish(.compressedStatuses(bits: 1, lst: try TestIssuer.Zlib.compressedZeros(count: 64 << 20)), at: path)
        case .oversizedBody:
            server.put(path, ListServer.Answer(contentType: "application/statuslist+cwt", body: [UInt8](repeating: 0, count: 50 << 20)))
        case .unknownStatusValue:
            var values = entries
            values[5] = 3
            try scenario.publish(.statuses(bits: 2, values), at: path)
        }
    }

    @Test func aDeadServerIsUndeterminedAndNotAskedOncePerEvent() throws {
        var scenario = try RevocationScenario(seed: 21, server: server)
        let gone = try ListServer()
        let uri = gone.url("/gone")
        gone.stop()
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
