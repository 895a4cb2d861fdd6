import Foundation
@testable import Pipeline
import Postgres
import Storage
import Testing
import TestSupport

/// What the server spends on a batch that holds a replay against an all-new
/// one, through the real `ResultStore.write`: replays and redeliveries are
/// ordinary traffic (4 % of the realistic mix), so they must not make a batch
/// dearer than the statement that decides them. Tables hold a few hundred
/// thousand rows first, so that lookups by id go through indexes as they do
/// in service. Prints server CPU per batch (from /proc, so the server must
/// run on this machine); asserts nothing about it, as this is a shared,
/// noisy machine.
///
///     VERIDOC_MEASURE_PATHS=1 scripts/with-test-services \
///         swift test --filter BatchPathCostTests
@Suite(.enabled(if: Services.available && ProcessInfo.processInfo.environment["VERIDOC_MEASURE_PATHS"] != nil,
                "set VERIDOC_MEASURE_PATHS=1 (and VERIDOC_TEST_POSTGRES) to measure"))
struct BatchPathCostTests {
    static let eventsPerBatch = 15
    static let batches = PreparedStatementCostTests.batches
    static let rounds = 6

    @Test func aReplayCostsABatchNoMoreThanItsDecision() throws {
        let harness = try ResultStoreTests.Harness()
        var clean: [Completion] = []
        var withReplay: [Completion] = []
        for _ in 0..<Self.batches {
            let events = try (0..<Self.eventsPerBatch).map { _ in try harness.event() }
            clean += try events.map(harness.completion)
            // The same batch with its last event swapped for a replay of its first.
            var replay = events[0]
            replay.attributes["id"] = "replay-of-\(events[0].id!)"
            withReplay += try (Array(events.dropLast()) + [replay]).map(harness.completion)
        }
        func batches(_ all: [Completion]) -> [[Completion]] {
            stride(from: 0, to: all.count, by: Self.eventsPerBatch).map { Array(all[$0..<$0 + Self.eventsPerBatch]) }
        }
        let cases = [("all new", batches(clean)), ("one replay", batches(withReplay))]

        let database = try TestDatabase()
        let admin = try database.connect()
        defer { admin.close() }
        _ = try Migrations.apply(on: admin)
        try admin.executeScript("""
            INSERT INTO results (event_id, verdict, reason_codes, received_at, verified_at, processing_seconds, source_topic, source_partition, source_offset)
              SELECT 'filler-' || md5(i::text), 'verified', '{}', now(), now(), 0, 't', 0, i FROM generate_series(1, 200000) i;
            INSERT INTO nonces (tenant, nonce_hash, event_id, used_at)
              SELECT 'tenant', sha256(i::text::bytea), 'filler-' || md5(i::text), now() FROM generate_series(1, 200000) i;
            INSERT INTO element_groups (event_id, namespace, elements, requested, retention_intent, retention_source, retention_capped)
              SELECT 'filler-' || md5((i / 4)::text), 'ns', ARRAY['e' || (i % 4), 'f' || (i % 4)], i % 4 = 0, 'willNotStore', 'request', false
              FROM generate_series(1, 800000) i
            """)
        for table in ["results", "nonces", "element_groups"] { try admin.executeScript("VACUUM ANALYZE \(table)") }
        let connection = try database.connect()
        defer { connection.close() }
        let pid = Int32(try #require(connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid")))
        let store = harness.store(connection)

        var runs = Array(repeating: [PreparedStatementCostTests.Run](), count: cases.count)
        for round in 0...Self.rounds {
            for index in round % 2 == 0 ? [0, 1] : [1, 0] {
                try admin.executeScript("""
                    DELETE FROM results WHERE event_id NOT LIKE 'filler-%'; DELETE FROM nonces WHERE event_id NOT LIKE 'filler-%';
                    DELETE FROM element_groups WHERE event_id NOT LIKE 'filler-%'; TRUNCATE outbox, consumer_positions, element_values
                    """)
                for table in ["results", "nonces", "element_groups"] { try admin.executeScript("VACUUM \(table)") }
                try admin.executeScript("CHECKPOINT")
                let before = try PreparedStatementCostTests.CPUSample(pid: pid)
                let start = DispatchTime.now().uptimeNanoseconds
                for (number, batch) in cases[index].1.enumerated() {
                    let written = try store.write(batch, positions: [harness.partition: Int64((number + 1) * Self.eventsPerBatch)])
                    #expect(written.path == .pipelined)
                    #expect(written.stored.count == Self.eventsPerBatch)
                }
                var run = PreparedStatementCostTests.Run()
                run.wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                let after = try PreparedStatementCostTests.CPUSample(pid: pid)
                run.serverTicks = after.ticks - before.ticks
                run.serverScheduled = after.scheduled - before.scheduled
                guard round > 0 else { continue }
                runs[index].append(run)
            }
        }
        let median = { (index: Int) in PreparedStatementCostTests.median(runs[index].map(\.serverScheduled)) }
        for (index, (name, _)) in cases.enumerated() {
            print("batch path cost \(name): median server CPU \(PreparedStatementCostTests.perBatch(median(index))) ms/batch (schedstat), "
                  + "wall \(PreparedStatementCostTests.perBatch(PreparedStatementCostTests.median(runs[index].map(\.wall)))) ms/batch")
        }
        print("batch path cost one replay / all new: server CPU \(String(format: "%.3f", median(1) / median(0))), "
              + "\(Self.batches) batches of \(Self.eventsPerBatch) events, \(Self.rounds) rounds after a warm-up")
    }
}
