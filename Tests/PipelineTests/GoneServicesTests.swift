import Foundation
@testable import Pipeline
import Synchronization
import Testing
import TestIssuer
import TestSupport

/// SIGTERM while the broker is gone for good (a bench or a cluster torn down
/// around a worker at work): the worker must still exit 0 about within its
/// drain, not wait for a coordinator that will not come back.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct GoneServicesTests {
    @Test func aWorkerWhoseServicesVanishedStillStopsOnSIGTERM() throws {
        let cluster = try OwnPostgres()
        let fixture = try PipelineFixture(postgres: cluster.connectionString, brokers: 1)
        let events = try mixedEvents(&fixture.factory, count: 3000, faultEvery: 10)
        let worker = try fixture.startWorker()
        try fixture.produce(records(events))
        #expect(try eventually(90) { try fixture.database.count("SELECT count(*) AS count FROM results") >= 100 })

        let errorsBefore = worker.log.components(separatedBy: "kafka client error").count
        fixture.broker.killNow()
        // SIGTERM once the worker has felt its broker gone.
        #expect(eventually(60) { worker.log.components(separatedBy: "kafka client error").count > errorsBefore }, "\(worker.log.suffix(1500))")
        let started = Date()
        // drainTimeoutSeconds is 15 (PipelineFixture); each stop step waits at least a second or two past it.
        let status = worker.terminate(timeout: 45)
        let seconds = Date().timeIntervalSince(started)
        #expect(status == 0, "exit 0 within 45 s of SIGTERM, got \(String(describing: status)) after \(Int(seconds)) s: \(worker.log.suffix(2000))")
    }
}

/// The drain's bound on closing the consumer (rd_kafka_consumer_close can wait
/// for a coordinator that is gone for good).
@Suite struct BoundedCloseTests {
    @Test func aCloseThatReturnsIsWaitedFor() {
        let closed = Mutex(false)
        #expect(BoundedClose.run(within: 10) { closed.withLock { $0 = true } })
        #expect(closed.withLock { $0 })
    }

    @Test func aCloseThatHangsIsLeftBehindAtTheDeadline() {
        let release = DispatchSemaphore(value: 0)
        let started = Date()
        #expect(!BoundedClose.run(within: 0.5) { release.wait() })
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.5 && waited < 5, "returned after \(waited) s")
        release.signal()
    }
}
