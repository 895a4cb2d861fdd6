import Foundation
import Testing
import TestIssuer
import TestSupport

/// Transient outages: PostgreSQL paused across several of the worker's retries, and a broker taken down.
/// The worker waits, recovers and loses nothing. This test pauses a
/// PostgreSQL cluster of its own, so other suites are not disturbed.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct OutageTests {
    @Test(.enabled(if: TestBroker.Kind.current == .mock, TestBroker.mockOnly)) func postgresAndBrokerOutagesAreWaitedOut() throws {
        let cluster = try OwnPostgres()
        let fixture = try PipelineFixture(postgres: cluster.connectionString)
        let events = try mixedEvents(&fixture.factory, count: 900, faultEvery: 10)
        let expected = Set(events.compactMap(\.id))
        let worker = try fixture.startWorker()
        try fixture.produce(records(Array(events.prefix(300))))
        func attributable(_ slice: ArraySlice<TestIssuer.GeneratedEvent>) -> Int { slice.filter { $0.id != nil }.count }
        #expect(try eventually(90) { try fixture.database.count("SELECT count(*) AS count FROM results") >= 100 })

        try cluster.pause()
        try fixture.produce(records(Array(events.dropFirst(300).prefix(300))))
        // The outage lasts until the worker has felt it and retried more than
        // once: counted in its own retries, however slowly a busy machine runs it.
        func retries() -> Int { worker.log.components(separatedBy: "failed; retrying").count - 1 }
        #expect(try eventually(120) { retries() >= 3 }, "the outage was felt and retried: \(worker.log.suffix(800))")
        #expect(worker.process.isRunning, "the worker waits for PostgreSQL instead of dying")
        try cluster.resume()
        let firstTwoThirds = attributable(events.prefix(600))
        #expect(try eventually(120) { try fixture.database.count("SELECT count(*) AS count FROM results") >= firstTwoThirds }, "\(worker.log.suffix(1500))")

        // Broker 1 leads some partitions and the mock does not move leaders:
        // records for them wait in the producer until the broker is back.
        #expect(try fixture.broker.command("down 1") == "OK")
        let broker = fixture.broker
        // Back up once the worker has felt the broker gone (a client error),
        // or at the latest after a minute: nothing below depends on how long
        // the broker was down, only that it came back.
        let errorsBefore = worker.log.components(separatedBy: "kafka client error").count
        let workerLog = worker.logFile
        let revive = Thread {
            _ = eventually(60) {
                ((try? String(contentsOf: workerLog, encoding: .utf8)) ?? "").components(separatedBy: "kafka client error").count > errorsBefore
            }
            _ = try? broker.command("up 1")
        }
        revive.start()
        try fixture.produce(records(Array(events.dropFirst(600))))
        #expect(try eventually(180) { try fixture.database.count("SELECT count(*) AS count FROM results") >= expected.count }, "\(worker.log.suffix(1500))")
        #expect(Set(try fixture.database.results().keys) == expected)
        let outcomes = try fixture.outcomes(expected: expected.count, timeout: 90)
        #expect(Set(outcomes.values) == expected)
        #expect(worker.terminate() == 0)
    }
}

/// A PostgreSQL cluster of the test's own (scripts/test-postgres), so that it
/// can be stopped without disturbing other tests.
final class OwnPostgres {
    let directory: URL
    let connectionString: String
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/test-postgres")

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/veridoc-own-pg-\(UUID().uuidString.prefix(8))")
        let exports = try Self.run(["start", directory.path])
        guard let line = exports.split(separator: "\n").first(where: { $0.contains("VERIDOC_TEST_POSTGRES=") }) else {
            throw TestFailure("scripts/test-postgres start printed no connection string")
        }
        var value = String(line[line.range(of: "VERIDOC_TEST_POSTGRES=")!.upperBound...])
        value = value.trimmingCharacters(in: CharacterSet(charactersIn: "'\" "))
        connectionString = value
    }

    func pause() throws { _ = try Self.run(["pause", directory.path]) }
    func resume() throws { _ = try Self.run(["resume", directory.path]) }

    @discardableResult
    private static func run(_ arguments: [String]) throws -> String {
        try Subprocess.output(script, arguments)
    }

    deinit {
        _ = try? Self.run(["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}
