import Foundation
import Kafka
import Testing
@testable import Pipeline

/// When the consumer loop wakes librdkafka's fetcher: only after an empty
/// poll while records have been arriving fast enough to fill the prefetch
/// queue, one assigned partition after another.
struct FetcherWakeTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let assigned = (0..<3).map { TopicPartition("requests", Int32($0)) }
    static let lagging: @Sendable (TopicPartition) -> Bool = { _ in true }

    @Test func aFillingStreamIsWokenRoundRobin() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start, hasRecordsLeft: Self.lagging) == nil, "nothing has arrived")
        #expect(wake.pollTimeoutMilliseconds(at: Self.start) == FetcherWake.calmPollMilliseconds)
        for step in 0..<4 { wake.received(bytes: 2_500, at: Self.start.addingTimeInterval(Double(step) * 0.1)) }
        let now = Self.start.addingTimeInterval(0.5)
        #expect(wake.pollTimeoutMilliseconds(at: now) == FetcherWake.stallPollMilliseconds)
        let woken = (0..<4).map { _ in wake.partitionToWake(among: Self.assigned, at: now, hasRecordsLeft: Self.lagging) }
        #expect(woken == [Self.assigned[0], Self.assigned[1], Self.assigned[2], Self.assigned[0]])
        #expect(wake.partitionToWake(among: [], at: now, hasRecordsLeft: Self.lagging) == nil)
    }

    /// A caught-up partition's fetch is waiting at the broker already: only
    /// partitions with records left are woken, and an empty poll looks at no
    /// more than `checksPerPoll` of them.
    @Test func onlyPartitionsWithRecordsLeftAreWoken() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        wake.received(bytes: 10_000, at: Self.start)
        let now = Self.start.addingTimeInterval(0.1)
        #expect(wake.partitionToWake(among: Self.assigned, at: now, hasRecordsLeft: { _ in false }) == nil)
        #expect(wake.partitionToWake(among: Self.assigned, at: now, hasRecordsLeft: { $0.partition == 2 }) == Self.assigned[2])

        let many = (0..<100).map { TopicPartition("requests", Int32($0)) }
        var looked: [Int32] = []
        var fresh = FetcherWake(prefetchBytes: 8_000)
        fresh.received(bytes: 10_000, at: Self.start)
        let first = fresh.partitionToWake(among: many, at: now) { looked.append($0.partition); return $0.partition == 50 }
        #expect(first == nil)
        #expect(looked == Array(0..<Int32(FetcherWake.checksPerPoll)))
        let second = fresh.partitionToWake(among: many, at: now) { looked.append($0.partition); return $0.partition == 50 }
        #expect(second == many[50])
        #expect(looked.last == 50)
    }

    @Test func aSlowStreamIsNeverWoken() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        // 1 KB a second for a minute: the queue (8 KB needed within 2–4 s) never fills.
        for second in 0..<60 {
            let time = Self.start.addingTimeInterval(Double(second))
            wake.received(bytes: 1_000, at: time)
            #expect(wake.partitionToWake(among: Self.assigned, at: time.addingTimeInterval(0.5), hasRecordsLeft: Self.lagging) == nil, "at \(second) s")
        }
        #expect(wake.pollTimeoutMilliseconds(at: Self.start.addingTimeInterval(60)) == FetcherWake.calmPollMilliseconds)
    }

    @Test func wakingStopsOnceTheStreamHasBeenQuietForTheWindow() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        wake.received(bytes: 10_000, at: Self.start)
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(1.9), hasRecordsLeft: Self.lagging) != nil)
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(FetcherWake.window), hasRecordsLeft: Self.lagging) == nil)
        // The arrivals of a window long past no longer count towards filling.
        wake.received(bytes: 1, at: Self.start.addingTimeInterval(10))
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(10.1), hasRecordsLeft: Self.lagging) == nil)
    }

    @Test func arrivalsOfThePreviousWindowStillCount() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        wake.received(bytes: 6_000, at: Self.start)
        wake.received(bytes: 2_500, at: Self.start.addingTimeInterval(FetcherWake.window + 0.5))  // a new window
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(FetcherWake.window + 0.6), hasRecordsLeft: Self.lagging) != nil)
    }
}

/// The waker runs wakes on its own thread, one at a time, dropping asks made
/// while one is in flight, and runs none after `stop`.
struct FetcherWakerTests {
    final class Calls: @unchecked Sendable {
        // Read and written with `lock` held.
        private let lock = NSLock()
        private var partitions: [TopicPartition] = []
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private var onCallerThread = false
        func record(_ partition: TopicPartition, caller: pthread_t) {
            lock.withLock {
                partitions.append(partition)
                if pthread_equal(caller, pthread_self()) != 0 { onCallerThread = true }
            }
        }
        var ranOnCallerThread: Bool { lock.withLock { onCallerThread } }
        var all: [TopicPartition] { lock.withLock { partitions } }
    }

    @Test(.timeLimit(.minutes(10)))
    func wakesRunOneAtATimeOffTheCallersThread() {
        let calls = Calls()
        let caller = pthread_self()
        let waker = FetcherWaker { partition in
            calls.record(partition, caller: caller)
            calls.started.signal()
            calls.release.wait()
        }
        waker.start()
        let (first, second, third) = (TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2))
        waker.wake(first)
        calls.started.wait()
        // The first wake is in flight (held by the test): asks now are dropped, and do not block.
        waker.wake(second)
        waker.wake(third)
        calls.release.signal()
        // Once it is done, the next ask runs.
        var next: TopicPartition?
        let deadline = Date().addingTimeInterval(30)
        while next == nil && Date() < deadline {
            waker.wake(third)
            if calls.started.wait(timeout: .now() + .milliseconds(10)) == .success { next = calls.all.last }
        }
        #expect(next == third)
        calls.release.signal()
        #expect(calls.all.first == first)
        #expect(!calls.all.contains(second))
        #expect(!calls.ranOnCallerThread)

        // After stop a wake is refused on the caller's thread: nothing is pending for the thread to run.
        waker.stop()
        let before = calls.all.count
        waker.wake(first)
        #expect(calls.started.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        #expect(calls.all.count == before)
    }
}
