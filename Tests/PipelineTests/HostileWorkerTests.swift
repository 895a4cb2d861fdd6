import Foundation
import Kafka
import Testing
import TestIssuer
import Verification
import TestSupport

/// A few hostile records through the real worker (the full table runs through
/// the Verifier in HostileInputTests): each ends as a result with its documented
/// reason code or as a dead letter with its cause, in bounded time, and the
/// worker keeps running.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct HostileWorkerTests {
    /// A verified Apple response replayed under a new event id, its tenant
    /// spelled with U+212A KELVIN SIGN for the K: Swift's String equality
    /// found the tenant while the nonce store keyed the replay apart, and it
    /// verified twice. By bytes it is an unknown tenant.
    @Test func aReplayUnderALookalikeTenantIsNotVerifiedAgain() throws {
        let fixture = try PipelineFixture(tenantID: "Kacme")
        let original = try fixture.factory.event(.appleWalletApp)
        var replay = original
        replay.attributes["id"] = "replay-\(original.id!)"
        replay.data["tenant"] = "\u{212A}acme"
        var sameTenant = original
        sameTenant.attributes["id"] = "again-\(original.id!)"
        let worker = try fixture.startWorker()
        try produce([("k1", original.json()), ("k2", replay.json()), ("k1", sameTenant.json())], to: fixture.broker.bootstrap)
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") >= 3 }, "\(worker.log.suffix(1500))")
        let stored = try fixture.database.results()
        #expect(stored[original.id!]?.reasons == [], "\(String(describing: stored[original.id!]))")
        #expect(stored[replay.attributes["id"]!]?.reasons == ["event.unknown_tenant"], "\(String(describing: stored[replay.attributes["id"]!]))")
        #expect(stored[sameTenant.attributes["id"]!]?.reasons == ["request.nonce_reused"], "\(String(describing: stored[sameTenant.attributes["id"]!]))")
        #expect(worker.terminate() == 0)
    }

    @Test func hostileRecordsEndAsResultsOrDeadLettersAndTheWorkerSurvives() throws {
        let fixture = try PipelineFixture()
        var records: [(key: String, value: [UInt8])] = []
        var expectedResults: [String: [String]] = [:]

        var deep = try fixture.factory.event(.isoDeviceResponse)
        deep = deep.replacingPayload([UInt8](repeating: 0x81, count: 10_000) + [0])
        records.append(("k1", deep.json()))
        expectedResults[deep.id!] = ["payload.malformed"]
        var huge = try fixture.factory.event(.appleWalletApp)
        huge = huge.replacingPayload([0x5b, 0x40, 0, 0, 0, 0, 0, 0, 0])
        records.append(("k2", huge.json()))
        expectedResults[huge.id!] = ["payload.malformed"]
        var foreign = try fixture.factory.event(.isoDeviceResponse)
        foreign.data["tenant"] = fixture.factory.merchant.tenantID + "\u{200B}"
        records.append(("k3", foreign.json()))
        expectedResults[foreign.id!] = ["event.unknown_tenant"]
        var wrapped = try fixture.factory.event(.isoDeviceResponse)
        wrapped.data["payload"] = wrapped.data["payload"]!.enumerated().map { $0.offset % 76 == 75 ? "\($0.element)\n" : "\($0.element)" }.joined()
        records.append(("k4", wrapped.json()))
        expectedResults[wrapped.id!] = ["event.invalid"]
        let valid = try fixture.factory.event(.appleWalletApp)
        records.append(("k5", valid.json()))
        expectedResults[valid.id!] = []
        // Fields past what the store can index or hold: each was once a batch PostgreSQL refused,
        // retried for ever, and every partition stalled behind it.
        var longTenant = try fixture.factory.event(.appleWalletApp)
        longTenant.data["tenant"] = String((0..<9000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
        records.append(("k6", longTenant.json()))
        expectedResults[longTenant.id!] = ["event.invalid"]
        var options = TestIssuer.EventOptions()
        options.requestedElements = [RequestedElement(namespace: TestIssuer.Credential.mDLNameSpace, element: "given_name", retention: .mayStore(days: 3_000_000_000))]
        let longRetention = try fixture.factory.event(.appleWalletApp, options: options)
        records.append(("k7", longRetention.json()))
        expectedResults[longRetention.id!] = ["event.invalid"]
        var issuer = fixture.factory
        issuer.credential[TestIssuer.Credential.mDLNameSpace, String(repeating: "n", count: 4000)] = .text("x")
        let longElement = try issuer.event(.appleWalletApp)
        records.append(("k8", longElement.json()))
        expectedResults[longElement.id!] = ["payload.malformed"]

        // Dead letters: larger than worker.maxEventBytes (1 MiB), a JSON nesting bomb, an id of 300 characters.
        var oversized = try fixture.factory.event(.isoDeviceResponse)
        oversized.data["payload"] = String(repeating: "A", count: 1_200_000)
        records.append(("d1", oversized.json()))
        records.append(("d2", Array(String(repeating: "[", count: 100_000).utf8)))
        var longID = try fixture.factory.event(.isoDeviceResponse)
        longID.attributes["id"] = String(repeating: "x", count: 300)
        records.append(("d3", longID.json()))

        let worker = try fixture.startWorker()
        try produce(records, to: fixture.broker.bootstrap)
        #expect(try eventually(90) { try fixture.database.count("SELECT count(*) AS count FROM results") >= expectedResults.count }, "\(worker.log.suffix(1500))")
        let stored = try fixture.database.results()
        for (id, reasons) in expectedResults {
            #expect(stored[id]?.reasons == reasons, "\(id): \(String(describing: stored[id]))")
        }
        let causes = try deadLetterCauses(bootstrap: fixture.broker.bootstrap, expected: 3)
        #expect(causes.sorted() == ["record.no_id", "record.no_id", "record.too_large"], "\(causes)")
        // Every position passed every record, the oversized dead letter included (its value
        // omitted: larger than the producer sends), so no partition is stuck behind it.
        #expect(try eventually(30) { try fixture.database.count("SELECT sum(next_offset)::bigint AS count FROM consumer_positions") == records.count })
        #expect(worker.process.isRunning, "the worker survives hostile records: \(worker.log.suffix(1500))")
        #expect(worker.terminate() == 0)
    }

    /// An outcome the producer refuses as too large (a topic limit below the
    /// outcome's 900 KB cap; 20 KB here) is neither resent on every 200 ms
    /// turn nor allowed to hold back the others: it waits in the outbox for the
    /// sweep (once per claim period, 3 s here), with one warning per attempt.
    @Test func anOutcomeTooLargeForTheTopicWaitsForTheSweepAndHoldsBackNothing() throws {
        let fixture = try PipelineFixture()
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as! [String: Any]
        var kafka = root["kafka"] as! [String: Any]
        var properties = kafka["properties"] as! [String: String]
        properties["message.max.bytes"] = "20000"
        kafka["properties"] = properties
        root["kafka"] = kafka
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: fixture.config)

        var issuer = fixture.factory
        for index in 0..<100 { issuer.credential[TestIssuer.Credential.mDLNameSpace, "long_element_\(index)_" + String(repeating: "x", count: 200)] = .text("x") }
        let large = try issuer.event(.appleWalletApp)
        let small = try (0..<5).map { _ in try fixture.factory.event(.appleWalletApp) }
        let worker = try fixture.startWorker()
        try produce([("big", large.json())] + small.enumerated().map { ("k\($0.offset)", $0.element.json()) }, to: fixture.broker.bootstrap)
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 6 }, "\(worker.log.suffix(1500))")
        // The five small outcomes are delivered (their rows deleted); the large one stays.
        #expect(try eventually(30) { try fixture.database.count("SELECT count(*) AS count FROM outbox") == 1 }, "\(worker.log.suffix(1500))")
        let marker = "outcome larger than the outcome topic accepts"
        func attempts() -> Int { worker.log.components(separatedBy: marker).count - 1 }
        // Each sweep claims the row anew (claimed_until moves on): counted
        // against the worker's own sweeps, not against a stopwatch, so a busy
        // machine that sweeps less often cannot make the test fail.
        let claim = "SELECT (extract(epoch FROM claimed_until) * 1000)::bigint AS count FROM outbox WHERE event_id = '\(large.id!)'"
        #expect(try eventually(30) { attempts() >= 1 }, "\(worker.log.suffix(1500))")
        let first = attempts()
        var claims = [try fixture.database.count(claim)]
        for _ in 0..<2 {
            let moved = try eventually(60) { try fixture.database.count(claim) != claims.last }
            #expect(moved, "the sweep claims the row again once its claim lapsed")
            claims.append(try fixture.database.count(claim))
        }
        // Two sweeps: two attempts, and one more if the second is under way as
        // we read the log; a resend on every 200 ms turn would be many more.
        #expect(attempts() - first <= 3, "\(attempts() - first) attempts in two sweeps")
        #expect(try fixture.database.count("SELECT count(*) AS count FROM outbox WHERE event_id = '\(large.id!)'") == 1)
        #expect(!worker.log.contains("produce failed"), "no error per attempt")
        #expect(worker.process.isRunning)
        #expect(worker.terminate() == 0)
    }

    func produce(_ records: [(key: String, value: [UInt8])], to bootstrap: String) throws {
        let delivered = Counter()
        let producer = try KafkaProducer(properties: ["bootstrap.servers": bootstrap, "message.max.bytes": "4000000"]) { report in
            if report.error == nil { delivered.increment() }
        }
        for (index, record) in records.enumerated() {
            try producer.send(topic: "veridoc.requests", key: Array(record.key.utf8), value: record.value, token: UInt64(index))
        }
        try producer.flush(timeoutMilliseconds: 30_000)
        producer.close()
        guard delivered.value == records.count else { throw TestFailure("only \(delivered.value) of \(records.count) delivered") }
    }

    func deadLetterCauses(bootstrap: String, expected: Int) throws -> [String] {
        let consumer = try KafkaConsumer(properties: [
            "bootstrap.servers": bootstrap, "group.id": "dlq-reader-\(UUID().uuidString)", "auto.offset.reset": "earliest",
            "session.timeout.ms": "6000", "fetch.wait.max.ms": "5",
        ], listener: NoStoredOffsets())
        defer { consumer.close() }
        try consumer.subscribe(["veridoc.requests.dlq"])
        var causes: [String] = []
        let deadline = Date().addingTimeInterval(60)
        while causes.count < expected && Date() < deadline {
            guard let message = try consumer.poll(timeoutMilliseconds: 200) else { continue }
            let cause = message.headers.last { $0.key == "veridoc.cause" }?.value.map { String(decoding: $0, as: UTF8.self) } ?? "?"
            if cause == "record.too_large" {
                #expect(message.value.isEmpty && message.headers.contains { $0.key == "veridoc.value.omitted" }, "a too-large dead letter is sent without its value")
            }
            causes.append(cause)
        }
        return causes
    }
}
