import Foundation
@testable import Pipeline
import Postgres
import Storage
import Testing
import TestSupport

/// What the persister's batches cost the server with and without prepared
/// statements: the real `ResultStore.write` (nonces, results, elements,
/// values, outbox, positions in one pipelined transaction) for small batches
/// like those of a worker at moderate load, on two connections that differ
/// only in `preparedStatements`. Prints each backend's CPU per batch
/// (utime+stime from /proc/<pid>/stat, and the scheduler's nanoseconds from
/// /proc/<pid>/schedstat, so the server must run on this machine); asserts
/// nothing about them, as this is a shared, noisy machine.
///
/// The same completions are written in every run, the tables emptied before
/// each; the two connections take turns in alternating order, so a noisy
/// neighbour hits both alike. A first run of each is a warm-up (catalog
/// caches, value partitions, the server's choice of a generic plan).
///
///     VERIDOC_MEASURE_PREPARED=1 scripts/with-test-services \
///         swift test --filter PreparedStatementCostTests
@Suite(.enabled(if: Services.available && ProcessInfo.processInfo.environment["VERIDOC_MEASURE_PREPARED"] != nil,
                "set VERIDOC_MEASURE_PREPARED=1 (and VERIDOC_TEST_POSTGRES) to measure"))
struct PreparedStatementCostTests {
    static let eventsPerBatch = 15
    static let batches = 120
    static let rounds = 6

    struct Run {
        var serverTicks = 0.0
        var serverScheduled = 0.0
        var wall = 0.0
    }

    @Test func serverCostOfPersisterBatches() throws {
        let harness = try ResultStoreTests.Harness()
        let completions = try (0..<Self.batches * Self.eventsPerBatch).map { _ in try harness.completion(try harness.event()) }
        let batches = stride(from: 0, to: completions.count, by: Self.eventsPerBatch).map { Array(completions[$0..<$0 + Self.eventsPerBatch]) }

        let database = try TestDatabase()
        let admin = try database.connect()
        defer { admin.close() }
        _ = try Migrations.apply(on: admin)
        let modes = try [false, true].map { prepared in
            let connection = try PostgresConnection(connectionString: database.connectionString, applicationName: "veridoc-test", preparedStatements: prepared)
            let pid = try #require(connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
            return (name: prepared ? "prepared" : "unnamed", connection: connection, pid: Int32(pid), store: harness.store(connection))
        }
        defer { modes.forEach { $0.connection.close() } }

        var runs = Array(repeating: [Run](), count: modes.count)
        for round in 0...Self.rounds {
            for index in round % 2 == 0 ? [0, 1] : [1, 0] {
                let mode = modes[index]
                try admin.executeScript("TRUNCATE results, elements, nonces, outbox, consumer_positions, element_values; CHECKPOINT")
                let before = try CPUSample(pid: mode.pid)
                let start = DispatchTime.now().uptimeNanoseconds
                for (number, batch) in batches.enumerated() {
                    let written = try mode.store.write(batch, positions: [harness.partition: Int64((number + 1) * Self.eventsPerBatch)])
                    #expect(written.path == .pipelined)
                }
                var run = Run()
                run.wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                let after = try CPUSample(pid: mode.pid)
                run.serverTicks = after.ticks - before.ticks
                run.serverScheduled = after.scheduled - before.scheduled
                #expect(try admin.execute("SELECT count(*) AS n FROM results").int(0, "n") == Int64(completions.count))
                guard round > 0 else { continue }
                runs[index].append(run)
                print("prepared-statement cost round \(round) \(mode.name): server CPU \(Self.perBatch(run.serverTicks)) ms/batch (ticks), "
                      + "\(Self.perBatch(run.serverScheduled)) ms/batch (schedstat), wall \(Self.perBatch(run.wall)) ms/batch")
            }
        }
        let elements = try admin.execute("SELECT count(*) AS n FROM elements").int(0, "n") ?? 0
        print("prepared-statement cost: \(Self.batches) batches of \(Self.eventsPerBatch) events (\(Double(elements) / Double(completions.count)) element rows an event), "
              + "\(Self.rounds) rounds after a warm-up")
        // Whether the server settled on generic plans (planned once) or still plans each execution.
        let held = try modes[1].connection.execute("SELECT left(statement, 48) AS s, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY name")
        for row in 0..<held.rowCount {
            print("prepared-statement cost: held \(held.string(row, "s") ?? "") … generic plans \(held.int(row, "generic_plans") ?? -1), "
                  + "custom plans \(held.int(row, "custom_plans") ?? -1)")
        }
        for (index, mode) in modes.enumerated() {
            print("prepared-statement cost \(mode.name): median server CPU \(Self.perBatch(Self.median(runs[index].map(\.serverTicks)))) ms/batch (ticks), "
                  + "\(Self.perBatch(Self.median(runs[index].map(\.serverScheduled)))) ms/batch (schedstat), "
                  + "median wall \(Self.perBatch(Self.median(runs[index].map(\.wall)))) ms/batch")
        }
        let ratio = Self.median(runs[1].map(\.serverScheduled)) / Self.median(runs[0].map(\.serverScheduled))
        let tickRatio = Self.median(runs[1].map(\.serverTicks)) / Self.median(runs[0].map(\.serverTicks))
        print("prepared-statement cost prepared / unnamed: server CPU \(String(format: "%.3f", ratio)) (schedstat), \(String(format: "%.3f", tickRatio)) (ticks)")
    }

    /// A process's CPU time so far, both ways: utime+stime counts whole clock
    /// ticks (10 ms), the scheduler's run time nanoseconds.
    struct CPUSample {
        let ticks: Double
        let scheduled: Double

        init(pid: Int32) throws {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            // After the parenthesised name, fields[11] and [12] are utime and stime (fields 14 and 15).
            let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
            ticks = (try #require(Double(fields[11])) + (try #require(Double(fields[12])))) / Double(sysconf(Int32(_SC_CLK_TCK)))
            let schedstat = try String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8)
            scheduled = try #require(Double(schedstat.split(separator: " ")[0])) / 1e9
        }
    }

    static func perBatch(_ seconds: Double) -> String { String(format: "%.3f", seconds * 1000 / Double(batches)) }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
