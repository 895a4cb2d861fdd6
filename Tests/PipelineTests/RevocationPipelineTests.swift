import Foundation
import Crypto
import Kafka
import MDoc
import Retention
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

    /// A worker whose tenant keeps every value 30 days (so accepted results
    /// keep their references) and re-checks lists every second.
    static func retainingFixture(statusLists: [String: Any] = [:]) throws -> PipelineFixture {
        let fixture = try PipelineFixture(
            tenantSettings: [
                "status": ["mode": "required", "maxWaitSeconds": 120],
                "retentionDefaults": [["namespace": "*", "element": "*", "retention": ["intent": "mayStore", "days": 30]]],
            ],
            settings: ["statusLists": ["allowInsecure": true, "timeoutSeconds": 60, "recheckIntervalSeconds": 1].merging(statusLists) { $1 }])
        try DataKeyRing.generateKeyFile(fixture.directory.appendingPathComponent("data-k1.key"))
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as? [String: Any])
        root["retention"] = ["dataKeys": [["id": "k1", "file": "data-k1.key"]], "activeKey": "k1"]
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: fixture.config)
        return fixture
    }

    /// Waits until `id`'s result records a later revocation, then reads the
    /// outcome topic (`messages` in all): its status-changed events.
    static func laterRevocation(of id: String, in fixture: PipelineFixture, worker: WorkerProcess, messages: Int) throws -> [[String: Any]] {
        #expect(try eventually(120) {
            try fixture.database.count("SELECT count(*) AS count FROM results WHERE event_id = '\(id)' AND later_status = 'revoked'") == 1
        }, "\(worker.log.suffix(1500))")
        let read = try TopicReader.read("veridoc.outcomes", bootstrap: fixture.broker.bootstrap, expected: messages, seconds: 120)
        return read.compactMap { try? JSONSerialization.jsonObject(with: Data($0.value)) as? [String: Any] }
            .filter { $0["type"] as? String == StatusChangedEvent.eventType }
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

    /// Every way a list can fail (`TestIssuer.ListFault`), through the
    /// real worker: each outcome says undetermined with the step that
    /// failed, rejected under `required` and verified under `bestEffort`.
    @Test(arguments: ["required", "bestEffort"])
    func everyListFaultReachesTheOutcome(_ mode: String) throws {
        let server = try ListServer()
        defer { server.stop() }
        let (fixture, signer) = try Self.fixture(mode: mode, server: server)
        var events: [(TestIssuer.ListFault, TestIssuer.GeneratedEvent)] = []
        for fault in TestIssuer.ListFault.allCases {
            let uri = server.url("/fault/\(fault.rawValue)")
            if let response = try fault.response(uri: uri, authority: fixture.factory.authority, signer: signer, now: fixture.factory.now) {
                server.put("/fault/\(fault.rawValue)", ListServer.Answer(status: response.status, contentType: response.contentType, body: response.body))
            }
            events.append((fault, try Self.event(fixture, MSOStatus(statusList: .init(index: TestIssuer.ListFault.index, uri: uri)))))
        }
        // And a server that is down: a port nothing listens on.
        let gone = try ClosedPort()
        defer { gone.close() }
        let down = try Self.event(fixture, MSOStatus(statusList: .init(index: 0, uri: gone.url("/list"))))
        let worker = try fixture.startWorker()
        try fixture.produce(try events.enumerated().map { ("f\($0.offset)", $0.element.1.json()) } + [("down", down.json())])
        let outcomes = try fixture.outcomeEvents(expected: events.count + 1, timeout: 180)
        #expect(outcomes.count == events.count + 1, "\(worker.log.suffix(1500))")
        let downData = try #require(outcomes.first { $0["subject"] as? String == down.id }?["data"] as? [String: Any])
        #expect(((downData["document"] as? [String: Any])?["status"] as? [String: Any])?["cause"] as? String == "fetch", "\(downData)")
        for (fault, event) in events {
            let data = try #require(outcomes.first { $0["subject"] as? String == event.id }?["data"] as? [String: Any], "no outcome for \(fault)")
            let status = (data["document"] as? [String: Any])?["status"] as? [String: Any]
            #expect(data["status"] as? String == "undetermined" && status?["cause"] as? String == fault.step, "\(fault): \(data)")
            let codes = (data["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            #expect(data["verdict"] as? String == (mode == "required" ? "rejected" : "verified"), "\(fault)")
            #expect(codes == (mode == "required" ? ["status.undetermined"] : []), "\(fault): \(codes)")
        }
        #expect(worker.terminate() == 0)
        #expect(!worker.log.contains("/fault/"))
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

    /// §5: a credential accepted as valid whose list later says revoked is
    /// recorded beside its result and announced once on the outcome topic;
    /// `forget` erases its reference with its values.
    @Test func aCredentialRevokedAfterAcceptanceIsAnnouncedOnceAndRecorded() throws {
        let server = try ListServer()
        defer { server.stop() }
        let fixture = try Self.retainingFixture()
        let signer = try fixture.factory.authority.issuingListSigner(now: fixture.factory.now)
        func publish(_ entries: [UInt8]) throws {
            let issued = Int64(Date().timeIntervalSince1970)
            var publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, entries), subject: server.url("/later"),
                                                     issuedAt: issued - 60, expiresAt: issued + 3_600)
            publisher.timeToLive = 1
            server.publish("/later", try publisher.signed(by: signer.key, chain: [signer.certificate]), mediaType: "application/statuslist+cwt")
        }
        try publish([0, 0])
        let accepted = try Self.event(fixture, MSOStatus(statusList: .init(index: 1, uri: server.url("/later"))))
        // Stays valid: its reference keeps the list read on every pass.
        let staying = try Self.event(fixture, MSOStatus(statusList: .init(index: 0, uri: server.url("/later"))))
        let id = try #require(accepted.id)
        let worker = try fixture.startWorker()
        try fixture.produce([("k", accepted.json()), ("s", staying.json())])
        let first = try fixture.outcomeEvents(expected: 2, timeout: 120)
        #expect(first.count == 2 && first.allSatisfy { ($0["data"] as? [String: Any])?["verdict"] as? String == "verified" }, "\(worker.log.suffix(1500))")
        #expect(try fixture.database.count("SELECT count(*) AS count FROM status_references WHERE event_id = '\(id)'") == 1)

        try publish([0, 1])
        let changed = try Self.laterRevocation(of: id, in: fixture, worker: worker, messages: 3)
        #expect(changed.count == 1)
        let event = try #require(changed.first)
        #expect(event["id"] as? String == StatusChangedEvent.id(forRequest: id, status: "revoked"))
        #expect(event["subject"] as? String == id)
        let data = try #require(event["data"] as? [String: Any])
        #expect(data["status"] as? String == "revoked" && data["acceptedStatus"] as? String == "valid" && data["tenant"] as? String == fixture.factory.merchant.tenantID)
        #expect(!String(decoding: try JSONSerialization.data(withJSONObject: event), as: UTF8.self).contains("/later"), "the event names no list")

        // More passes, each reading the list again: still one announcement.
        let port = try #require(worker.httpPort())
        func fetches() throws -> Double {
            try PrometheusText(RawHTTP.request("GET", "/metrics", port: port).body).values("veridoc_status_list_fetches_total").reduce(0) { $0 + $1.value }
        }
        let before = try fetches()
        #expect(try eventually(120) { try fetches() >= before + 2 })
        #expect(try TopicReader.read("veridoc.outcomes", bootstrap: fixture.broker.bootstrap, expected: 4, seconds: 3).count == 3)
        #expect(worker.terminate() == 0)

        // Analytics count it: accepted valid, revoked later.
        let stats = try Subprocess.run(Binaries.veridoc, ["stats", "--config", fixture.config.path], mergingStandardError: true)
        let revocationRows = stats.output.split(separator: "\n").drop { !$0.hasPrefix("Revocation") }
        #expect(stats.status == 0 && revocationRows.contains { $0.contains("verified") && $0.contains("valid") && $0.contains("revoked") }, "\(stats.output)")

        let forget = try Subprocess.run(Binaries.veridoc, ["forget", "--config", fixture.config.path, "--request", id], mergingStandardError: true)
        #expect(forget.status == 0 && forget.output.contains("1 revocation references"), "\(forget.output)")
        #expect(try fixture.database.count("SELECT count(*) AS count FROM status_references WHERE event_id = '\(id)'") == 0)
        #expect(try fixture.database.count("SELECT count(*) AS count FROM status_references") == 1, "the other result's reference stays")
    }

    /// A list one worker fetched is in the database: a restarted worker (a
    /// new process, an empty memory) answers from it without a request.
    @Test func aRestartedWorkerSharesTheListsAlreadyFetched() throws {
        let server = try ListServer()
        defer { server.stop() }
        let (fixture, signer) = try Self.fixture(mode: "required", server: server)
        try Self.publish([0, 1, 0, 0, 0, 0, 0, 0], at: "/shared", on: server, signer: signer, now: fixture.factory.now)
        let first = try Self.event(fixture, MSOStatus(statusList: .init(index: 0, uri: server.url("/shared"))))
        let second = try Self.event(fixture, MSOStatus(statusList: .init(index: 1, uri: server.url("/shared"))))
        let worker = try fixture.startWorker()
        try fixture.produce([("a", first.json())])
        #expect(try fixture.outcomeEvents(expected: 1, timeout: 120).count == 1, "\(worker.log.suffix(1500))")
        #expect(worker.terminate() == 0)
        #expect(server.requests("/shared") == 1)
        #expect(try fixture.database.count("SELECT count(*) AS count FROM status_lists") == 1)

        let restarted = try fixture.startWorker("restarted")
        try fixture.produce([("b", second.json())])
        let outcomes = try fixture.outcomeEvents(expected: 2, timeout: 120)
        let answer = try #require(outcomes.first { $0["subject"] as? String == second.id }?["data"] as? [String: Any], "\(restarted.log.suffix(1500))")
        #expect(answer["status"] as? String == "revoked")
        #expect(server.requests("/shared") == 1, "the restarted worker fetched the list again")
        #expect(restarted.terminate() == 0)
    }

    /// A document signer that names a CRL is checked against it by the
    /// worker: one listed there is rejected, one not listed verifies, and
    /// the CRL, like a list token, is shared with a restarted worker.
    @Test func aDocumentSignerOnItsIACAsCRLIsRejectedAndTheCRLIsShared() throws {
        let server = try ListServer()
        defer { server.stop() }
        let (fixture, _) = try Self.fixture(mode: "required", server: server)
        let now = fixture.factory.now
        // Two signers under the tenant's IACA (same key, same name), both naming the CRL.
        let kept = try fixture.factory.authority.namingRevocationLists(documentSigner: [server.url("/ds.crl")])
        let revoked = try fixture.factory.authority.namingRevocationLists(documentSigner: [server.url("/ds.crl")])
        server.publish("/ds.crl", try kept.revocationList([.init(revoked.documentSigner, reason: 1)], thisUpdate: now - 600, nextUpdate: now + 86_400),
                       mediaType: "application/pkix-crl")
        fixture.factory.authority = kept
        let valid = try Self.event(fixture, nil)
        let later = try Self.event(fixture, nil)
        fixture.factory.authority = revoked
        let rejected = try Self.event(fixture, nil)

        let worker = try fixture.startWorker()
        try fixture.produce([("a", valid.json()), ("b", rejected.json())])
        let outcomes = try fixture.outcomeEvents(expected: 2, timeout: 120)
        #expect(outcomes.count == 2, "\(worker.log.suffix(1500))")
        let answers = try [valid, rejected].map { event in try #require(outcomes.first { $0["subject"] as? String == event.id }?["data"] as? [String: Any]) }
        #expect(answers[0]["verdict"] as? String == "verified" && answers[0]["status"] as? String == "valid")
        #expect(answers[1]["verdict"] as? String == "rejected" && answers[1]["status"] as? String == "revoked")
        #expect((answers[1]["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } == ["status.revoked"])
        #expect(worker.terminate() == 0)
        #expect(server.requests("/ds.crl") == 1)
        #expect(try fixture.database.count("SELECT count(*) AS count FROM status_lists WHERE list_kind = 'crl'") == 1)
        #expect(!worker.log.contains("/ds.crl"))

        let restarted = try fixture.startWorker("restarted")
        try fixture.produce([("c", later.json())])
        let all = try fixture.outcomeEvents(expected: 3, timeout: 120)
        let answer = try #require(all.first { $0["subject"] as? String == later.id }?["data"] as? [String: Any], "\(restarted.log.suffix(1500))")
        #expect(answer["verdict"] as? String == "verified" && answer["status"] as? String == "valid")
        #expect(server.requests("/ds.crl") == 1, "the restarted worker fetched the CRL again")
        #expect(restarted.terminate() == 0)
    }

    /// §5 for X.509: a document signer its IACA puts on its CRL after a
    /// document was accepted is found by the re-check (the CRL fetched again
    /// after `crlRefreshSeconds`) and announced once.
    @Test func aDocumentSignerRevokedAfterAcceptanceIsFoundOnTheCRL() throws {
        let server = try ListServer()
        defer { server.stop() }
        let fixture = try Self.retainingFixture(statusLists: ["crlRefreshSeconds": 1])
        fixture.factory.authority = try fixture.factory.authority.namingRevocationLists(documentSigner: [server.url("/later.crl")])
        let authority = fixture.factory.authority
        func publish(_ entries: [CertificateRevocationListBuilder.Entry]) throws {
            server.publish("/later.crl", try authority.revocationList(entries, thisUpdate: Date() - 60, nextUpdate: Date() + 86_400),
                           mediaType: "application/pkix-crl")
        }
        try publish([])
        let accepted = try Self.event(fixture, nil)
        let id = try #require(accepted.id)
        let worker = try fixture.startWorker()
        try fixture.produce([("k", accepted.json())])
        let first = try fixture.outcomeEvents(expected: 1, timeout: 120)
        #expect((first.first?["data"] as? [String: Any])?["status"] as? String == "valid", "\(worker.log.suffix(1500))")
        #expect(try fixture.database.count("SELECT count(*) AS count FROM status_references WHERE event_id = '\(id)' AND list_kind = 'crl'") == 1)

        try publish([.init(authority.documentSigner, reason: 1)])
        let changed = try Self.laterRevocation(of: id, in: fixture, worker: worker, messages: 2)
        #expect(changed.count == 1 && changed.first?["subject"] as? String == id)
        #expect(worker.terminate() == 0)
        #expect(!worker.log.contains("/later.crl"))
    }
}
