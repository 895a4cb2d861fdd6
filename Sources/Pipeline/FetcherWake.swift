import Foundation
import Kafka

/// When the consumer loop wakes librdkafka's fetcher (`KafkaConsumer.wakeFetcher`).
///
/// The prefetch is bounded (`queued.max.messages.kbytes`), and librdkafka
/// 2.0.2 fetches again for a queue that reached its bound only when its
/// broker thread next wakes, up to a second later. A pool that empties the
/// queue faster than that idles: a 100k-event backlog drained at 55 % of the
/// peak rate, 1.1 of 2 cores busy, once the pool verified ~8,000 events/s.
///
/// So while records arrive fast enough to have filled the queue (its bound
/// within the last one to two `window`s), a poll that comes back empty is taken for that
/// stall: the loop polls in short steps and wakes the fetcher between them,
/// one assigned partition's leader at a time (round robin, so each broker's
/// thread is reached). A slow or quiet topic is never woken: its queue never
/// fills, and its fetches wait at the broker for data.
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

    /// The partition whose leader to ask after an empty poll; nil unless
    /// records recently arrived fast enough to have filled the queue.
    mutating func partitionToWake(among assigned: [TopicPartition], at time: Date = Date()) -> TopicPartition? {
        roll(to: time)
        guard mayStall(at: time), !assigned.isEmpty else { return nil }
        defer { next &+= 1 }
        return assigned[next % assigned.count]
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
