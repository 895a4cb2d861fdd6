import Foundation
import Pipeline
import Postgres
import Testing
import TestIssuer
import Verification
import TestSupport

/// /metrics, /healthz and /readyz of a `veridoc run` process, checked against
/// the results table, and its stderr log lines.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct WorkerObservabilityTests {
    @Test func readinessMetricsAndLogsFollowTheWork() throws {
        let fixture = try PipelineFixture()
        let events = try mixedEvents(&fixture.factory, count: 400, faultEvery: 3)
        let expected = events.compactMap(\.id)
        // Events without an id cannot be attributed: dead letters, like the two poison records.
        let deadLetters = Double(events.count - expected.count + 2)
        let worker = try fixture.startWorker(environment: [
            "VERIDOC_LOG_LEVEL": "debug", "VERIDOC_KAFKA_PROPERTY_STATISTICS_INTERVAL_MS": "1000",
        ])
        let port = try #require(worker.httpPort(), "no `observability listening` line: \(worker.log.suffix(1500))")

        // Up at once; not ready until partitions are assigned (the worker is
        // still migrating and joining the group).
        #expect(try RawHTTP.request("GET", "/healthz", port: port).status == 200)
        let early = try RawHTTP.request("GET", "/readyz", port: port)
        #expect(early.status == 503, "\(early.body)")
        #expect(["no partitions assigned\n", "postgres unreachable\n"].contains(early.body))
        #expect(try eventually(60) { try RawHTTP.request("GET", "/readyz", port: port).status == 200 }, "\(worker.log.suffix(1500))")
        #expect(try RawHTTP.request("GET", "/readyz", port: port).body == "ready\n")

        // Two more records that cannot be attributed go to the dead-letter topic.
        try fixture.produce(records(events) + [(key: "poison", value: [0xff, 0xfe]), (key: "poison", value: Array(#"{"specversion":"1.0"}"#.utf8))])
        #expect(try eventually(180) { try fixture.database.count("SELECT count(*) AS count FROM results") >= expected.count }, "\(worker.log.suffix(2000))")
        let rows = try fixture.database.count("SELECT count(*) AS count FROM results")
        #expect(rows == expected.count)

        // Per verdict and first reason code, as the table says.
        let connection = try fixture.database.connect()
        defer { connection.close() }
        let grouped = try connection.execute(
            "SELECT verdict, coalesce(reason_codes[1], 'none') AS reason, count(*) AS count FROM results GROUP BY 1, 2")
        var table: [String: Double] = [:]
        for row in 0..<grouped.rowCount {
            table["\(grouped.string(row, "verdict")!)/\(grouped.string(row, "reason")!)"] = Double(grouped.int(row, "count")!)
        }
        #expect(table.count > 3, "the mix has several reasons: \(table)")

        var metrics = try PrometheusText("")
        let settled = try eventually(30) {
            metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: port).body)
            let lag = metrics.values("veridoc_consumer_lag")
            return metrics.values("veridoc_events_total").map(\.value).reduce(0, +) == Double(rows)
                && metrics.values("veridoc_dead_letters_total").map(\.value).reduce(0, +) == deadLetters
                && (metrics.values("veridoc_outcomes_published_total").first?.value ?? 0) >= Double(rows)
                && metrics.values("veridoc_outbox_backlog").first?.value == 0
                && !lag.isEmpty
        }
        #expect(settled, "\(metrics.samples.filter { !$0.name.contains("_bucket") })")

        var counted: [String: Double] = [:]
        for sample in metrics.values("veridoc_events_total") where sample.value > 0 {
            counted["\(sample.labels["verdict"]!)/\(sample.labels["reason"]!)"] = sample.value
        }
        #expect(counted == table)
        // Documents by docType, as the results say (one document per response here).
        let byDocType = try connection.execute("SELECT doc_type, verdict, count(*) AS count FROM results WHERE doc_type IS NOT NULL GROUP BY 1, 2")
        var documentTable: [String: Double] = [:]
        for row in 0..<byDocType.rowCount {
            documentTable["\(byDocType.string(row, "doc_type")!)/\(byDocType.string(row, "verdict")!)"] = Double(byDocType.int(row, "count")!)
        }
        var documentCounted: [String: Double] = [:]
        for sample in metrics.values("veridoc_documents_total") where sample.value > 0 {
            documentCounted["\(sample.labels["doc_type"]!)/\(sample.labels["verdict"]!)"] = sample.value
        }
        #expect(!documentTable.isEmpty && documentCounted == documentTable, "\(documentCounted) \(documentTable)")
        #expect(metrics.values("veridoc_events_total").map(\.value).reduce(0, +) == Double(rows))
        #expect(Set(metrics.values("veridoc_dead_letters_total").filter { $0.value > 0 }.compactMap { $0.labels["cause"] }) == ["record.not_utf8", "record.no_id"])
        #expect(metrics.values("veridoc_partitions_assigned").first?.value == 6)
        #expect(metrics.values("veridoc_postgres_up").first?.value == 1)
        #expect((metrics.values("veridoc_rebalances_total").first { $0.labels["kind"] == "assigned" }?.value ?? 0) >= 1)
        #expect((metrics.values("veridoc_process_duration_seconds_count").first?.value ?? 0) >= Double(rows))
        #expect((metrics.values("veridoc_batch_commit_duration_seconds_count").first?.value ?? 0) >= 1)
        #expect((metrics.values("veridoc_batch_size_sum").first?.value ?? 0) >= Double(rows))
        let batches = metrics.values("veridoc_batches_total")
        #expect(batches.count == 1)
        #expect(batches.first?.value == metrics.values("veridoc_batch_commit_duration_seconds_count").first?.value)
        #expect((batches.first?.value ?? 0) >= 1, "\(batches)")
        #expect(metrics.values("veridoc_events_duplicate_total").first?.value == 0)
        #expect(metrics.values("veridoc_purge_lag_seconds").count == 1)
        for name in ["veridoc_verify_in_flight", "veridoc_persist_queue_depth"] {
            #expect(metrics.values(name).count == 1, "\(name)")
        }
        // The verified events' issuer signatures are remembered (their signer chains to the tenant's IACA).
        #expect((metrics.values("veridoc_signature_memo_entries").first?.value ?? 0) >= 1, "\(metrics.values("veridoc_signature_memo_entries"))")
        #expect(metrics.values("veridoc_signature_tables").count == 1)
        let lag = metrics.values("veridoc_consumer_lag")
        #expect(lag.allSatisfy { $0.labels["topic"] == "veridoc.requests" && Int($0.labels["partition"] ?? "") != nil && $0.value >= 0 }, "\(lag)")

        // Bounded labels only: no event id (nor tenant-supplied text) in any label value.
        let ids = Set(expected)
        let labelValues = Set(metrics.samples.flatMap(\.labels.values))
        #expect(labelValues.allSatisfy { value in !ids.contains(value) && value.count <= 64 }, "\(labelValues.sorted())")
        #expect(labelValues.allSatisfy { value in !expected.contains { value.contains($0) } })

        #expect(worker.terminate() == 0)

        // Logs: one JSON object per line with time, level, message; rejected
        // events at debug with the event id, reason codes and only a configured tenant.
        let lines = worker.log.split(separator: "\n").map(String.init)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line.prefix(200))")
            if let object { objects.append(object) }
        }
        #expect(objects.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        let rejected = objects.filter { $0["message"] as? String == "event rejected" }
        let rejectedRows = Int(table.filter { $0.key.hasPrefix("rejected/") }.values.reduce(0, +))
        #expect(rejected.count == rejectedRows)
        #expect(rejected.allSatisfy { Set($0.keys).isSubset(of: ["time", "level", "message", "event", "tenant", "reason"]) && $0["level"] as? String == "debug" })
        let configured = fixture.factory.merchant.tenantID
        #expect(rejected.allSatisfy { ($0["tenant"] as? String).map { $0 == configured } ?? true })
        #expect(rejected.contains { ($0["reason"] as? String)?.contains("event.unknown_tenant") == true && $0["tenant"] == nil })
    }
}
