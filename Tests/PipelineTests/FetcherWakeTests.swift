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

    @Test func aFillingStreamIsWokenRoundRobin() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start) == nil, "nothing has arrived")
        #expect(wake.pollTimeoutMilliseconds(at: Self.start) == FetcherWake.calmPollMilliseconds)
        for step in 0..<4 { wake.received(bytes: 2_500, at: Self.start.addingTimeInterval(Double(step) * 0.1)) }
        let now = Self.start.addingTimeInterval(0.5)
        #expect(wake.pollTimeoutMilliseconds(at: now) == FetcherWake.stallPollMilliseconds)
        let woken = (0..<4).map { _ in wake.partitionToWake(among: Self.assigned, at: now) }
        #expect(woken == [Self.assigned[0], Self.assigned[1], Self.assigned[2], Self.assigned[0]])
        #expect(wake.partitionToWake(among: [], at: now) == nil)
    }

    @Test func aSlowStreamIsNeverWoken() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        // 1 KB a second for a minute: the queue (8 KB needed within 2–4 s) never fills.
        for second in 0..<60 {
            let time = Self.start.addingTimeInterval(Double(second))
            wake.received(bytes: 1_000, at: time)
            #expect(wake.partitionToWake(among: Self.assigned, at: time.addingTimeInterval(0.5)) == nil, "at \(second) s")
        }
        #expect(wake.pollTimeoutMilliseconds(at: Self.start.addingTimeInterval(60)) == FetcherWake.calmPollMilliseconds)
    }

    @Test func wakingStopsOnceTheStreamHasBeenQuietForTheWindow() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        wake.received(bytes: 10_000, at: Self.start)
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(1.9)) != nil)
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(FetcherWake.window)) == nil)
        // The arrivals of a window long past no longer count towards filling.
        wake.received(bytes: 1, at: Self.start.addingTimeInterval(10))
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(10.1)) == nil)
    }

    @Test func arrivalsOfThePreviousWindowStillCount() {
        var wake = FetcherWake(prefetchBytes: 8_000)
        wake.received(bytes: 6_000, at: Self.start)
        wake.received(bytes: 2_500, at: Self.start.addingTimeInterval(FetcherWake.window + 0.5))  // a new window
        #expect(wake.partitionToWake(among: Self.assigned, at: Self.start.addingTimeInterval(FetcherWake.window + 0.6)) != nil)
    }
}
