import Foundation
import Kafka

/// When the consumer loop wakes librdkafka's fetcher (`KafkaConsumer.wakeFetcher`).
///
/// The prefetch is bounded (`queued.max.messages.kbytes`), and librdkafka
/// fetches again for a partition whose queue reached its bound only when its
/// broker thread next decides to; a pool that empties the queue sooner idles
/// until then.
///
/// So while records arrive fast enough to have filled the queue (its bound
/// within the last one to two `window`s), the loop polls in short steps, and
/// after a poll that comes back empty it wakes the leader of an assigned
/// partition that has records left to fetch (its last reported high
/// watermark beyond what was consumed), looking round robin so that each
/// broker's thread is reached. A slow or quiet topic is never woken: its
/// queue never fills. Nor is one that is caught up: its fetches wait at the
/// broker for data, and waking it anyway (a round trip every 10 ms) would
/// add to the tail latency of every event.
///
/// The librdkafka this links (2.8) also backs such a partition off for
/// `fetch.queue.backoff.ms` (1 s by default) once its queue reaches the
/// bound, and a wake does not cut that backoff short: the property, not the
/// wake, decides how long a full queue waits.
struct FetcherWake {
    /// How far back arrivals count.
    static let window: TimeInterval = 2
    /// The poll timeout while a stall is possible, and otherwise.
    static let stallPollMilliseconds: Int32 = 10
    static let calmPollMilliseconds: Int32 = 100

    /// Bytes that must have arrived, in this window and the one before, for the queue to have filled.
    let fillingBytes: Int
    private var lastRecord: Date?
    private var windowStart: Date?
    private var bytesInWindow = 0
    private var bytesInPreviousWindow = 0
    private var next = 0

    /// `prefetchBytes`: the consumer's `queued.max.messages.kbytes` in bytes.
    init(prefetchBytes: Int) {
        fillingBytes = max(1, prefetchBytes)
    }

    func pollTimeoutMilliseconds(at time: Date = Date()) -> Int32 {
        mayStall(at: time) ? Self.stallPollMilliseconds : Self.calmPollMilliseconds
    }

    mutating func received(bytes: Int, at time: Date = Date()) {
        roll(to: time)
        lastRecord = time
        bytesInWindow += bytes
    }

    /// Partitions looked at after one empty poll, at most.
    static let checksPerPoll = 32

    /// The partition whose leader to ask after an empty poll: the next one,
    /// round robin, that `hasRecordsLeft`; nil unless records recently arrived
    /// fast enough to have filled the queue (the assignment is not even read then).
    mutating func partitionToWake(among assignment: @autoclosure () -> [TopicPartition], at time: Date = Date(),
                                  hasRecordsLeft: (TopicPartition) -> Bool) -> TopicPartition? {
        roll(to: time)
        guard mayStall(at: time) else { return nil }
        let assigned = assignment()
        guard !assigned.isEmpty else { return nil }
        for _ in 0..<min(Self.checksPerPoll, assigned.count) {
            let partition = assigned[next % assigned.count]
            next &+= 1
            if hasRecordsLeft(partition) { return partition }
        }
        return nil
    }

    private func mayStall(at time: Date) -> Bool {
        guard let lastRecord, time.timeIntervalSince(lastRecord) < Self.window else { return false }
        return bytesInWindow + bytesInPreviousWindow >= fillingBytes
    }

    private mutating func roll(to time: Date) {
        guard let start = windowStart else {
            windowStart = time
            return
        }
        let elapsed = time.timeIntervalSince(start)
        guard elapsed >= Self.window else { return }
        bytesInPreviousWindow = elapsed < 2 * Self.window ? bytesInWindow : 0
        bytesInWindow = 0
        windowStart = time
    }
}

/// Runs `KafkaConsumer.wakeFetcher` on a thread of its own, so that the
/// consumer loop never waits for its round trip (up to its 500 ms timeout
/// when the leader does not answer) while it has records to hand to the pool
/// and rebalances to serve. At most one wake is in flight; asks made
/// meanwhile are dropped.
final class FetcherWaker: @unchecked Sendable {
    private let wakeLeader: @Sendable (TopicPartition) -> Void
    // `pending` and `stopped` are read and written with `condition` locked.
    private let condition = NSCondition()
    private var pending: TopicPartition?
    private var stopped = false

    /// `wakeLeader` runs on the waker's thread, one call at a time.
    init(wakeLeader: @escaping @Sendable (TopicPartition) -> Void) {
        self.wakeLeader = wakeLeader
    }

    convenience init(consumer: KafkaConsumer) {
        self.init { partition in consumer.wakeFetcher(for: partition, timeoutMilliseconds: 500) }
    }

    func start() {
        Thread.worker("wake") { [self] in run() }.start()
    }

    /// Asks for `partition`'s leader to be woken; returns at once.
    func wake(_ partition: TopicPartition) {
        condition.lock()
        if pending == nil && !stopped {
            pending = partition
            condition.signal()
        }
        condition.unlock()
    }

    /// Ends the thread after the wake in flight, if any (bounded by its timeout).
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while pending == nil && !stopped { condition.wait() }
            guard !stopped, let partition = pending else {
                condition.unlock()
                return
            }
            condition.unlock()
            wakeLeader(partition)
            condition.lock()
            pending = nil
            condition.unlock()
        }
    }
}
