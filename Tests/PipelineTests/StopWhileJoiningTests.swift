import Foundation
import Testing
import TestSupport

/// Regression (found by `veridoc-dev chaos`): a worker SIGTERM'd while it was
/// joining the group — after its JoinGroup, before its first SyncGroup
/// completed — aborted inside librdkafka < 2.3 ("rd_kafka_sticky_assignor_state_destroy:
/// Assertion `assignor_state' failed", librdkafka #4312) instead of exiting 0.
/// The worker closes its consumer at once, without waiting for an
/// assignment; this test is what shows the librdkafka it links (2.8) holds.
/// SyncGroup errors injected on the broker hold the worker in that window.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct StopWhileJoiningTests {
    /// SIGTERM comes 4 s after start, while SyncGroup keeps failing: with 3
    /// errors the worker may have its assignment by then, with 40 it is still
    /// joining. The delay only places the signal; wherever a busy machine
    /// makes it land (before the join, during it, after the assignment) the
    /// worker must exit 0, so no outcome depends on it.
    @Test(.enabled(if: TestBroker.Kind.current == .mock, TestBroker.mockOnly), arguments: [3, 40])
    func sigtermWhileJoiningExitsZero(syncErrors: Int) throws {
        let delay = 4.0
        let fixture = try PipelineFixture()
        // SyncGroup (API key 14) answered with errors: join, fail sync, rejoin, …
        #expect(try fixture.broker.command("errors 14 " + Array(repeating: "27", count: syncErrors).joined(separator: ",")) == "OK")
        let worker = try fixture.startWorker()
        #expect(eventually(30) { worker.log.contains("worker started") })
        Thread.sleep(forTimeInterval: delay)
        let joined = worker.log.contains("partitions assigned")
        let status = worker.terminate(timeout: 60)
        #expect(status == 0, "exit \(String(describing: status)) (assigned before SIGTERM: \(joined)): \(worker.log.suffix(600))")
        #expect(!worker.log.contains("leaving it to the process exit"), "the consumer closed within the drain")
        print("sync errors \(syncErrors): assigned before SIGTERM \(joined)")
    }

    /// Regression (found by `veridoc-dev chaos`): SIGTERM while the worker still waits
    /// for PostgreSQL at start (migrations) ended the process by the signal
    /// (status 143 to an orchestrator) instead of a clean exit 0.
    @Test func sigtermWhileWaitingForPostgresExitsZero() throws {
        let fixture = try PipelineFixture()
        let worker = try fixture.startWorker(environment: ["VERIDOC_POSTGRES": "host=127.0.0.1 port=1 user=postgres dbname=postgres connect_timeout=1"])
        #expect(eventually(30) { worker.log.contains("postgres not reachable yet") })
        // terminate gives nil when the worker has not exited within its timeout.
        let status = worker.terminate(timeout: 30)
        #expect(status == 0 && worker.process.terminationReason == .exit, "\(String(describing: status)): \(worker.log.suffix(600))")
    }
}
