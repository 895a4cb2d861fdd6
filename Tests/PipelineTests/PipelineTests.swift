import Foundation
import Kafka
import Postgres
import Testing
import TestIssuer
import Verification
import TestSupport

/// The worker as a process against a real broker process and a real
/// PostgreSQL. Serialized: each test starts processes of its own, and the
/// machine has two cores.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct PipelineTests {
    /// Every event id gets exactly one result row with the verdict the in-process
    /// verifier gives, and an outcome event with the id derived from it;
    /// unattributable records go to the dead-letter topic.
    @Test func mixedStreamIsVerifiedStoredAndPublishedOnce() throws {
        let fixture = try PipelineFixture()
        // The mock broker keeps only ≈ 5 MB per partition and drops older records
        // silently: 800 events of ≈ 9 KB over 6 partitions stay well inside it.
        let events = try mixedEvents(&fixture.factory, count: 800)
        let expected = events.filter { $0.id != nil }
        let worker = try fixture.startWorker()
        try fixture.produce(records(events))

        #expect(try eventually(300) { try fixture.database.count("SELECT count(*) AS count FROM results") >= expected.count }, "\(worker.log.suffix(2000))")
        let stored = try fixture.database.results()
        #expect(stored.count == expected.count)
        var mismatches: [String] = []
        for event in expected {
            guard let id = event.id, let row = stored[id] else { mismatches.append("missing \(event.id ?? "?")"); continue }
            let reference = fixture.verifier.verify(eventJSON: event.json(), at: Date())
            let codes = reference.report.reasons.map(\.code.rawValue)
            if row.reasons != codes || row.verdict != reference.verdict {
                mismatches.append("\(id): stored \(row.verdict) \(row.reasons), verify says \(reference.verdict) \(codes)")
            }
            if codes != event.expectedReasons.map(\.rawValue) { mismatches.append("\(id): generator expected \(event.expectedReasons)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        // Every verified row says how the device authenticated; the MACs name the reader that signed for them.
        #expect(try fixture.database.count("SELECT count(*) AS count FROM results WHERE verdict = 'verified' AND device_auth IS NULL") == 0)
        #expect(try fixture.database.count("SELECT count(*) AS count FROM results WHERE verdict = 'verified' AND device_auth = 'signature'") > 0)
        #expect(try fixture.database.count(
            "SELECT count(*) AS count FROM results WHERE verdict = 'verified' AND device_auth = 'mac' AND device_reader = '\(TestIssuer.Merchant.readerID)'") > 0)

        let outcomes = try fixture.outcomes(expected: expected.count)
        for event in expected {
            let id = event.id!
            #expect(outcomes[OutcomeEvent.id(forRequest: id)] == id, "no outcome for \(id)")
        }
        #expect(worker.terminate() == 0, "SIGTERM drains and exits 0")
        #expect(try fixture.database.count("SELECT count(*) AS count FROM outbox") == 0, "delivered outcomes leave the outbox")
    }

    /// SIGKILL mid-stream, several times: still exactly one row per id, none
    /// missing, outcomes for all (unmarked outbox rows are republished).
    @Test func killedWorkersLoseAndDuplicateNothing() throws {
        let fixture = try PipelineFixture(batchSize: 50)
        let events = try mixedEvents(&fixture.factory, count: 900, faultEvery: 10)
        let expected = Set(events.compactMap(\.id))
        try fixture.produce(records(events))
        var kills = 0
        for round in 0..<4 {
            let worker = try fixture.startWorker("worker-\(round)")
            let before = try fixture.database.count("SELECT count(*) AS count FROM results")
            let progressed = try eventually(60, every: 0.05) { try fixture.database.count("SELECT count(*) AS count FROM results") > before + 100 }
            #expect(progressed, "worker \(round) made progress before the kill: \(worker.log.suffix(800))")
            worker.kill()
            kills += 1
        }
        let last = try fixture.startWorker("worker-final")
        #expect(try eventually(180) { try fixture.database.count("SELECT count(*) AS count FROM results") >= expected.count }, "\(last.log.suffix(2000))")
        let stored = try fixture.database.results()
        #expect(Set(stored.keys) == expected)
        #expect(kills == 4)
        let outcomes = try fixture.outcomes(expected: expected.count, timeout: 90)
        #expect(Set(outcomes.values) == expected)
        #expect(last.terminate() == 0)
    }

    /// Two then three workers share the partitions; one leaving hands its
    /// partitions over without loss.
    ///
    /// The second worker leaves once the third's join has settled (every
    /// partition held by exactly one worker, each worker holding some), not
    /// while the group is still forming: tansu keeps a leader that leaves a
    /// forming group as its leader, and with that member gone the group
    /// cannot form again for minutes (its JoinGroup answers keep naming the
    /// departed leader, so nobody sends the assignment). A broker's
    /// coordinator doing that is not what this test is about; a leaving worker
    /// handing its partitions over is.
    @Test func workersInOneGroupSplitPartitionsAndHandOver() throws {
        let fixture = try PipelineFixture()
        let events = try mixedEvents(&fixture.factory, count: 900, faultEvery: 10)
        let expected = Set(events.compactMap(\.id))
        let first = try fixture.startWorker("worker-a")
        let second = try fixture.startWorker("worker-b")
        try fixture.produce(records(Array(events.prefix(300))))
        let third = try fixture.startWorker("worker-c")
        try fixture.produce(records(Array(events.dropFirst(300).prefix(300))))
        let shared = try eventually(120) {
            try fixture.database.count("SELECT count(*) AS count FROM results") >= 420 && Self.settled([first, second, third], partitions: 6)
        }
        #expect(shared, "\([first, second, third].map { Self.heldPartitions($0).sorted() })")
        #expect(second.terminate() == 0, "a leaving worker drains and exits 0")
        try fixture.produce(records(Array(events.dropFirst(600))))
        let converged = try eventually(180) { try fixture.database.count("SELECT count(*) AS count FROM results") >= expected.count }
        let diagnosis = converged ? "" : try fixture.groupDiagnosis([first, second, third])
        #expect(converged, "\(diagnosis)")
        #expect(Set(try fixture.database.results().keys) == expected)
        let assignedLines = [first, second, third].map { $0.log.components(separatedBy: "\n").filter { $0.contains("partitions assigned") }.count }
        #expect(assignedLines.allSatisfy { $0 > 0 }, "every worker got partitions: \(assignedLines)")
        let sources = try fixture.database.count("SELECT count(DISTINCT source_partition) AS count FROM results")
        #expect(sources == 6)
        #expect(first.terminate() == 0 && third.terminate() == 0)
    }

    /// A nonce is accepted once; the same event redelivered is not a replay;
    /// a poison record goes to the dead-letter topic and its partition continues.
    @Test func replaysAreRejectedRedeliveriesAreNotAndPoisonIsDeadLettered() throws {
        let fixture = try PipelineFixture()
        let worker = try fixture.startWorker()
        let original = try fixture.factory.event(.appleWalletApp)
        var replay = original
        replay.attributes["id"] = "replay-of-\(original.id!)"
        let key = "same-session"
        try fixture.produce([(key, original.json()), (key, original.json())])
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 1 })
        try fixture.produce([(key, replay.json())])
        // Poison: not UTF-8, not JSON, and no id; then a valid event on the same key.
        let after = try fixture.factory.event(.isoDeviceResponse)
        try fixture.produce([(key, [0xff, 0xfe, 0x00]), (key, Array("not json".utf8)), (key, Array(#"{"specversion":"1.0"}"#.utf8)), (key, after.json())])
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 3 }, "\(worker.log.suffix(1500))")
        let stored = try fixture.database.results()
        #expect(stored[original.id!]?.verdict == "verified")
        #expect(stored[replay.id!]?.reasons == ["request.nonce_reused"])
        #expect(stored[after.id!]?.verdict == "verified")
        // Each verified event's nonce for its tenant, and its presentation for the deployment.
        #expect(try fixture.database.count("SELECT count(*) AS count FROM nonces WHERE tenant <> ''") == 2)
        #expect(try fixture.database.count("SELECT count(*) AS count FROM nonces WHERE tenant = ''") == 2)

        let letters = try readDeadLetters(fixture, expected: 3)
        #expect(letters.count == 3)
        #expect(Set(letters.compactMap { $0["veridoc.cause"] }) == ["record.not_utf8", "record.no_id"])
        #expect(letters.allSatisfy { $0["veridoc.reason"] == "event.invalid" && $0["veridoc.origin.topic"] == "veridoc.requests" && $0["veridoc.origin.offset"] != nil })
        #expect(worker.terminate() == 0)
    }

    /// CloudEvents binary mode: attributes in `ce_*` headers, `data` as the value.
    @Test func binaryModeEventsAreVerifiedLikeStructuredOnes() throws {
        let fixture = try PipelineFixture()
        let worker = try fixture.startWorker()
        let event = try fixture.factory.event(.appleWalletWeb)
        let structured = try JSONSerialization.jsonObject(with: Data(event.json())) as! [String: Any]
        let data = try JSONSerialization.data(withJSONObject: structured["data"]!)
        var headers = ["specversion", "id", "source", "type", "time"].map { name in
            KafkaHeader("ce_\(name)", Array((structured[name] as! String).utf8))
        }
        headers.append(KafkaHeader("content-type", Array("application/json; charset=utf-8".utf8)))
        try fixture.produce([("binary", Array(data))], headers: headers)
        // A binary-mode record with an id but a broken body is rejected, not dead-lettered.
        let brokenHeaders = [KafkaHeader("ce_specversion", Array("1.0".utf8)), KafkaHeader("ce_id", Array("binary-broken".utf8))]
        try fixture.produce([("binary", Array("{}".utf8))], headers: brokenHeaders)
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 2 }, "\(worker.log.suffix(1500))")
        let stored = try fixture.database.results()
        #expect(stored[event.id!]?.verdict == "verified")
        #expect(stored["binary-broken"]?.reasons == ["event.invalid"])
        #expect(worker.terminate() == 0)
    }

    /// The partitions a worker holds by its own log: assignments add and
    /// revocations take away, in order (a cooperative rebalance logs only the
    /// change, an eager one revokes everything first).
    static func heldPartitions(_ worker: WorkerProcess) -> Set<String> {
        var held: Set<String> = []
        for line in worker.log.split(separator: "\n") where line.contains("\"partitions ") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let message = object["message"] as? String, let list = object["partitions"] as? String else { continue }
            let partitions = list.split(separator: ",").map(String.init)
            switch message {
            case "partitions assigned": held.formUnion(partitions)
            case "partitions revoked": held.subtract(partitions)
            default: continue
            }
        }
        return held
    }

    /// Every partition held by exactly one of the workers, and each holding some.
    static func settled(_ workers: [WorkerProcess], partitions: Int) -> Bool {
        let held = workers.map(heldPartitions)
        return held.allSatisfy { !$0.isEmpty } && held.reduce(0) { $0 + $1.count } == partitions && Set(held.joined()).count == partitions
    }

    private func readDeadLetters(_ fixture: PipelineFixture, expected: Int) throws -> [[String: String]] {
        try TopicReader.read("veridoc.requests.dlq", bootstrap: fixture.broker.bootstrap, expected: expected).map { message in
            var headers: [String: String] = [:]
            for header in message.headers { headers[header.key] = header.value.map { String(decoding: $0, as: UTF8.self) } }
            return headers
        }
    }
}
