import Foundation
import MDoc
import Observability
@testable import Pipeline
import Synchronization
import Testing
import TestIssuer
import TestSupport
import Verification

/// The worker's /readyz follows the VICALs its tenants loaded: ready while
/// they are fresh, 503 naming the list once one is past its nextUpdate plus
/// grace. The time is the health's clock, moved by the test; /readyz is
/// served over loopback by the worker's own HTTP server.
@Suite struct TrustListReadinessTests {
    /// 2025-06-15T14:13:20Z.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    final class Clock: Sendable {
        let time = Mutex(TrustListReadinessTests.now)
        func read() -> Date { time.withLock { $0 } }
        func set(_ date: Date) { time.withLock { $0 = date } }
    }

    /// A tenant whose IACA comes from a VICAL due again at `nextUpdate`, loaded from a config file at `now`.
    static func directory(nextUpdate: Date, graceSeconds: Int) throws -> (TenantDirectory, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-readiness-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let list = try TestIssuer.TrustList(now: now)
        let authority = try TestIssuer.Authority(now: now)
        try TestIssuer.PEM.certificates([list.root]).write(to: folder.appendingPathComponent("vical-root.pem"), atomically: true, encoding: .utf8)
        try Data(try list.vical([.init(authority.iaca, docTypes: nil)], date: now - 3_600, nextUpdate: nextUpdate))
            .write(to: folder.appendingPathComponent("daily.vical"))
        let config: [String: Any] = ["tenants": [[
            "id": "acme", "vicals": [["file": "daily.vical", "anchors": ["vical-root.pem"], "graceSeconds": graceSeconds]],
        ]]]
        let file = folder.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: file)
        return (try Configuration.load(from: file, at: now).directory, folder)
    }

    @Test func readyzTurnsUnreadyWhenAVICALGoesStaleWhileRunning() throws {
        let (directory, folder) = try Self.directory(nextUpdate: Self.now + 3_600, graceSeconds: 600)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = Clock()
        let health = WorkerHealth(clock: { clock.read() })
        health.watchTrustLists(directory.tenants.flatMap(\.trustListDeadlines))
        health.partitionsChanged(owned: 1)
        health.postgresRoundTrip(succeeded: true)
        let server = try HTTPServer(port: 0, loopbackOnly: true, registry: MetricsRegistry()) { health.readiness() }
        defer { server.stop() }

        #expect(try RawHTTP.request("GET", "/readyz", port: server.port).body == "ready\n")
        // Past nextUpdate, within the grace: still ready.
        clock.set(Self.now + 3_600 + 300)
        health.postgresRoundTrip(succeeded: true)
        #expect(try RawHTTP.request("GET", "/readyz", port: server.port).status == 200)
        // Past the grace: unready, naming the list and its nextUpdate.
        clock.set(Self.now + 3_600 + 601)
        health.postgresRoundTrip(succeeded: true)
        let stale = try RawHTTP.request("GET", "/readyz", port: server.port)
        #expect(stale.status == 503)
        #expect(stale.body.contains("daily.vical") && stale.body.contains(RFC3339.string(from: Self.now + 3_600)), "\(stale.body)")
    }

    /// The Worker hands its tenants' lists to its health when it is made.
    @Test func theWorkerWatchesItsTenantsLists() throws {
        let (directory, folder) = try Self.directory(nextUpdate: Self.now + 3_600, graceSeconds: 0)
        defer { try? FileManager.default.removeItem(at: folder) }
        let metrics = PipelineMetrics()
        let configuration = WorkerConfiguration(
            bootstrapServers: "127.0.0.1:9", groupID: "readiness", requestTopic: "requests", outcomeTopic: "outcomes", deadLetterTopic: "dlq",
            kafkaProperties: [:], postgres: "", workers: 1, batchSize: 1, batchLinger: 0.001, drainTimeout: 1, maxEventBytes: 1 << 20,
            nonceKey: Array(repeating: 7, count: 32), outboxClaim: 30)
        _ = try Worker(configuration: configuration, directory: directory, metrics: metrics)
        #expect(metrics.health.staleTrustList(at: Self.now) == nil)
        #expect(metrics.health.staleTrustList(at: Self.now + 3_601)?.list.contains("daily.vical") == true)
    }
}
