import Foundation
import MDoc
import Testing
import TestIssuer
import TestSupport
import Verification

/// Revocation through the real worker: documents whose MSO names lists on a
/// list server in the test process, verified, resolved by the worker's status
/// service and published. A list that is slow to come holds none of the
/// worker's verification threads: events without one go on meanwhile.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct RevocationPipelineTests {
    static func fixture(mode: String, server: ListServer) throws -> (PipelineFixture, TestIssuer.ListSigner) {
        let fixture = try PipelineFixture(tenantSettings: ["status": ["mode": mode, "maxWaitSeconds": 120]],
                                          settings: ["statusLists": ["allowInsecure": true, "timeoutSeconds": 60]])
        return (fixture, try fixture.factory.authority.issuingListSigner(now: fixture.factory.now))
    }

    static func publish(_ entries: [UInt8], at path: String, on server: ListServer, signer: TestIssuer.ListSigner, now: Date) throws {
        let issued = Int64(now.timeIntervalSince1970)
        let publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, entries), subject: server.url(path),
                                                 issuedAt: issued - 60, expiresAt: issued + 3_600)
        server.publish(path, try publisher.signed(by: signer.key, chain: [signer.certificate]), mediaType: "application/statuslist+cwt")
    }

    static func event(_ fixture: PipelineFixture, _ status: MSOStatus?) throws -> TestIssuer.GeneratedEvent {
        var options = TestIssuer.EventOptions()
        options.status = status
        return try fixture.factory.event(.isoDeviceResponse, options: options)
    }

    @Test(arguments: ["required", "bestEffort"])
    func eachAnswerReachesTheOutcome(_ mode: String) throws {
        let server = try ListServer()
        defer { server.stop() }
        let (fixture, signer) = try Self.fixture(mode: mode, server: server)
        try Self.publish([0, 1, 0, 0, 0, 0, 0, 0], at: "/list", on: server, signer: signer, now: fixture.factory.now)
        let cases: [(TestIssuer.GeneratedEvent, verdict: String, status: String, codes: [String])] = [
            (try Self.event(fixture, MSOStatus(statusList: .init(index: 0, uri: server.url("/list")))), "verified", "valid", []),
            (try Self.event(fixture, MSOStatus(statusList: .init(index: 1, uri: server.url("/list")))), "rejected", "revoked", ["status.revoked"]),
            (try Self.event(fixture, MSOStatus(statusList: .init(index: 0, uri: server.url("/absent")))),
             mode == "required" ? "rejected" : "verified", "undetermined", mode == "required" ? ["status.undetermined"] : []),
            (try Self.event(fixture, nil), "verified", "none", []),
        ]
        let worker = try fixture.startWorker()
        try fixture.produce(try cases.enumerated().map { ("k\($0.offset)", $0.element.0.json()) })
        let outcomes = try fixture.outcomeEvents(expected: cases.count, timeout: 120)
        #expect(outcomes.count == cases.count, "\(worker.log.suffix(1500))")
        for (event, verdict, status, codes) in cases {
            let id = try #require(event.id)
            let outcome = try #require(outcomes.first { $0["subject"] as? String == id }, "no outcome for \(status)")
            let data = try #require(outcome["data"] as? [String: Any])
            #expect(data["verdict"] as? String == verdict, "\(status)")
            #expect(data["status"] as? String == status, "\(status)")
            #expect((data["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } == codes, "\(status)")
        }
        #expect(server.requests("/list") == 1, "one fetch for both events of the list")
        #expect(worker.terminate() == 0)
        // The list's URI is in no log line.
        #expect(!worker.log.contains("/list") && !worker.log.contains("/absent"))
    }

    @Test func aSlowListHoldsNoVerificationThread() throws {
        let server = try ListServer()
        defer { server.stop() }
        let (fixture, signer) = try Self.fixture(mode: "required", server: server)
        try Self.publish([0, 0, 0, 0, 0, 0, 0, 0], at: "/slow", on: server, signer: signer, now: fixture.factory.now)
        server.hold("/slow")
        // More waiting events than the worker has threads (2), each of its own key.
        let waiting = try (0..<6).map { index in try Self.event(fixture, MSOStatus(statusList: .init(index: UInt64(index), uri: server.url("/slow")))) }
        let plain = try (0..<4).map { _ in try Self.event(fixture, nil) }
        let worker = try fixture.startWorker()
        try fixture.produce(waiting.enumerated().map { ("w\($0.offset)", $0.element.json()) })
        #expect(try eventually(60) { server.requests("/slow") == 1 }, "\(worker.log.suffix(1500))")
        try fixture.produce(plain.enumerated().map { ("p\($0.offset)", $0.element.json()) })
        let plainIDs = Set(try plain.map { try #require($0.id) })
        let early = try fixture.outcomeEvents(expected: plain.count, timeout: 120)
        #expect(Set(early.compactMap { $0["subject"] as? String }) == plainIDs, "the events without a list were answered while the list was held")
        server.release("/slow")
        let all = try fixture.outcomeEvents(expected: waiting.count + plain.count, timeout: 120)
        #expect(all.count == waiting.count + plain.count)
        #expect(all.allSatisfy { ($0["data"] as? [String: Any])?["verdict"] as? String == "verified" })
        #expect(server.requests("/slow") == 1)
        #expect(worker.terminate() == 0)
    }
}
