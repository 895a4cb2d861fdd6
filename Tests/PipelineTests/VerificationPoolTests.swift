import Dispatch
import Foundation
import Kafka
@testable import Pipeline
import Synchronization
import Testing
import TestSupport

/// The pool's scheduling, with a stand-in for verification (pure logic): one
/// key at a time in arrival order, different keys side by side, backpressure
/// at capacity, and abandoning queued jobs. The worker's suites run it with
/// real verification against the broker and PostgreSQL.
@Suite struct VerificationPoolTests {
    static let partition = TopicPartition("requests", 0)

    static func job(_ offset: Int64, key: String?) -> Job {
        let ticket = PartitionTracker.Ticket(topicPartition: partition, offset: offset, generation: 1)
        let message = KafkaMessage(topicPartition: partition, offset: offset, key: key.map { Array($0.utf8) }, value: [])
        return Job(ticket: ticket, key: message.key, receivedAt: Date(), content: .unread(message))
    }

    static func finished(_ job: Job) -> JobWork.Outcome {
        .completion(Completion(ticket: job.ticket, key: job.key, receivedAt: job.receivedAt, result: nil))
    }

    static func offset(_ outcome: JobWork.Outcome) -> Int64 {
        switch outcome {
        case .completion(let completion): completion.ticket.offset
        case .deadLetter(let job): job.ticket.offset
        }
    }

    /// What the stand-in saw: jobs running per key, and the order jobs finished.
    final class Record: Sendable {
        private struct State {
            var runningKeys: [String: Int] = [:]
            var overlaps = 0
            var finished: [Int64] = []
        }
        private let state = Mutex(State())

        func started(_ key: String) {
            state.withLock {
                $0.runningKeys[key, default: 0] += 1
                if $0.runningKeys[key]! > 1 { $0.overlaps += 1 }
            }
        }
        func ended(_ key: String) { state.withLock { $0.runningKeys[key]! -= 1 } }
        func finished(_ offset: Int64) { state.withLock { $0.finished.append(offset) } }
        var overlaps: Int { state.withLock { $0.overlaps } }
        var order: [Int64] { state.withLock { $0.finished } }
    }

    @Test func jobsOfOneKeyRunOneAtATimeInArrivalOrder() {
        let record = Record()
        let keys = ["a", "b", "c"]
        let pool = VerificationPool(threads: 4, capacity: 4096, verify: { job in
            let key = String(decoding: job.key ?? [], as: UTF8.self)
            record.started(key)
            if job.ticket.offset % 7 == 0 { Thread.sleep(forTimeInterval: 0.001) }
            record.ended(key)
            return Self.finished(job)
        }, deliver: { record.finished(Self.offset($0)) })
        defer { pool.stop() }
        // Most jobs wait behind their key's running job: a long queue per key.
        for offset in 0..<3_000 { pool.submit(Self.job(Int64(offset), key: keys[offset % keys.count])) }
        #expect(pool.waitUntilIdle(timeout: 60))

        #expect(record.overlaps == 0)
        let order = record.order
        #expect(order.count == 3_000)
        for (index, _) in keys.enumerated() {
            let ofKey = order.filter { Int($0) % keys.count == index }
            let outOfOrder = zip(ofKey, ofKey.dropFirst()).filter { $0 > $1 }.count
            #expect(outOfOrder == 0, "key \(keys[index]) finished out of arrival order")
            #expect(ofKey.count == 1_000)
        }
    }

    @Test func differentKeysAndKeylessJobsRunSideBySide() {
        // The first job holds its thread until the second has started: a pool that
        // ran them one after the other would never let it go.
        let secondStarted = DispatchSemaphore(value: 0)
        let heldUntilSecond = Atomic<Bool>(false)
        let pool = VerificationPool(threads: 2, capacity: 8, verify: { job in
            if job.ticket.offset == 0 {
                heldUntilSecond.store(secondStarted.wait(timeout: .now() + 30) == .success, ordering: .sequentiallyConsistent)
            } else {
                secondStarted.signal()
            }
            return Self.finished(job)
        }, deliver: { _ in })
        defer { pool.stop() }
        pool.submit(Self.job(0, key: "a"))
        pool.submit(Self.job(1, key: nil))
        #expect(pool.waitUntilIdle(timeout: 20))
        let held = heldUntilSecond.load(ordering: .sequentiallyConsistent)
        #expect(held)
    }

    @Test func submitWaitsAtCapacityUntilJobsFinish() {
        let release = DispatchSemaphore(value: 0)
        let pool = VerificationPool(threads: 1, capacity: 4, verify: { job in
            release.wait()
            return Self.finished(job)
        }, deliver: { _ in })
        defer { pool.stop() }
        for offset in 0..<4 { pool.submit(Self.job(Int64(offset), key: "k\(offset)")) }
        #expect(!pool.hasCapacity)
        #expect(pool.inFlight == 4)
        #expect(!pool.waitForCapacity(timeout: 0.05))

        let fifthIn = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            pool.submit(Self.job(4, key: "k4"))
            fifthIn.store(true, ordering: .sequentiallyConsistent)
            done.signal()
        }
        #expect(eventually(30, every: 0.005) { pool.blockedSubmitters == 1 }, "submit waits at capacity")
        let returned = fifthIn.load(ordering: .sequentiallyConsistent)
        #expect(!returned, "submit returned past capacity")
        for _ in 0..<5 { release.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(pool.waitUntilIdle(timeout: 30))
        #expect(pool.inFlight == 0)
        #expect(pool.hasCapacity)
    }

    @Test func abandonDropsQueuedJobsAndKeepsTheOrderOfTheRest() {
        let release = DispatchSemaphore(value: 0)
        let running = DispatchSemaphore(value: 0)
        let record = Record()
        let pool = VerificationPool(threads: 1, capacity: 64, verify: { job in
            if job.ticket.offset == 0 {
                running.signal()
                release.wait()
            }
            return Self.finished(job)
        }, deliver: { record.finished(Self.offset($0)) })
        defer { pool.stop() }
        // Offset 0 runs (and holds the only thread); 1…12 queue, key "k" behind it.
        pool.submit(Self.job(0, key: "k"))
        for offset in 1...12 { pool.submit(Self.job(Int64(offset), key: offset % 3 == 0 ? "other" : "k")) }
        #expect(running.wait(timeout: .now() + 30) == .success)
        let dropped = pool.abandon { $0.ticket.offset % 2 == 0 }
        #expect(dropped == 6)  // 2, 4, …, 12: the running job 0 is not abandoned
        #expect(pool.inFlight == 7)
        release.signal()
        #expect(pool.waitUntilIdle(timeout: 30))

        let order = record.order
        #expect(order.first == 0)
        #expect(Set(order) == [0, 1, 3, 5, 7, 9, 11])
        let ofK = order.filter { $0 % 3 != 0 }
        let ofOther = order.filter { $0 % 3 == 0 && $0 != 0 }
        #expect(ofK == ofK.sorted())
        #expect(ofOther == ofOther.sorted())
    }
}
