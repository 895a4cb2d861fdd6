import FIFO
import Dispatch
import Foundation
@testable import Pipeline
import Synchronization
import Testing
import TestSupport

/// The queue between the verification pool and the persister: order, bounds,
/// and that an element it has handed out is no longer held by it.
@Suite struct BlockingQueueTests {
    final class Box: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func keepsOrderAcrossWrapAroundAndGrowth() {
        let queue = BlockingQueue<Int>(capacity: 5)
        var expected = 0
        var next = 0
        // Interleaved puts and takes move the head around the ring many times.
        for round in 0..<200 {
            for _ in 0..<(round % 5 + 1) where queue.count < 5 {
                #expect(queue.put(next))
                next += 1
            }
            for _ in 0..<(round % 3 + 1) {
                guard let taken = queue.take(timeout: 0) else { break }
                #expect(taken == expected)
                expected += 1
            }
        }
        // Past the capacity without waiting: the ring grows, order is kept.
        for _ in 0..<100 {
            queue.putWithoutWaiting(next)
            next += 1
        }
        #expect(queue.count == next - expected)
        let rest = queue.take(upTo: 7, before: .distantPast) + queue.take(upTo: .max, before: .distantPast)
        #expect(rest == Array(expected..<next))
        #expect(queue.count == 0)
        #expect(queue.take(timeout: 0) == nil)
    }

    @Test func aTakenElementIsReleasedByTheQueue() {
        let queue = BlockingQueue<Box>(capacity: 4096)
        weak var first: Box?
        weak var drained: Box?
        do {
            let box = Box(1)
            first = box
            queue.put(box)
            let other = Box(2)
            drained = other
            queue.put(other)
            queue.put(Box(3))
        }
        do {
            let taken = queue.take(timeout: 0)
            #expect(taken?.value == 1)
            let batch = queue.take(upTo: 1, before: .distantPast)
            #expect(batch.map(\.value) == [2])
        }
        // Only the third is still queued: the first two went with their takers.
        #expect(first == nil)
        #expect(drained == nil)
        #expect(queue.count == 1)
    }

    @Test func putWaitsWhileFullAndCloseWakesEveryone() {
        let queue = BlockingQueue<Int>(capacity: 2)
        #expect(queue.put(1))
        #expect(queue.put(2))
        let thirdIn = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            queue.put(3)
            thirdIn.store(true, ordering: .sequentiallyConsistent)
            done.signal()
        }
        #expect(eventually(30, every: 0.005) { queue.waiting.putters == 1 }, "a full queue makes the producer wait")
        let returned = thirdIn.load(ordering: .sequentiallyConsistent)
        #expect(!returned)
        #expect(queue.take(timeout: 1) == 1)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(queue.take(upTo: .max, before: .distantPast) == [2, 3])

        let waiting = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            #expect(queue.take(timeout: 30) == nil)
            waiting.signal()
        }
        #expect(eventually(30, every: 0.005) { queue.waiting.takers == 1 })
        queue.close()
        #expect(waiting.wait(timeout: .now() + 30) == .success, "close wakes a taker")
        #expect(!queue.put(4), "a closed queue refuses")
    }

    /// `take(upTo:before:)` (30 s from now) on a thread of its own.
    final class BackgroundTake: Sendable {
        private let taken = Mutex<[Int]?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ queue: BlockingQueue<Int>, upTo max: Int) {
            Thread.detachNewThread { [self] in
                let batch = queue.take(upTo: max, before: Date().addingTimeInterval(30))
                taken.withLock { $0 = batch }
                done.signal()
            }
        }

        /// What it took, once it has returned; nil if it has not within `seconds`.
        func batch(within seconds: TimeInterval) -> [Int]? {
            done.wait(timeout: .now() + seconds) == .success ? taken.withLock { $0 } : nil
        }
    }

    @Test func aTakerWaitingForABatchIsWokenOnceItIsQueued() {
        let queue = BlockingQueue<Int>(capacity: 50)
        let take = BackgroundTake(queue, upTo: 5)
        #expect(eventually(30, every: 0.005) { queue.waiting.takers == 1 })
        for value in 1...4 { queue.put(value) }
        #expect(take.batch(within: 0) == nil && queue.waiting.takers == 1, "four of five do not end the wait")
        queue.put(5)
        #expect(take.batch(within: 30) == [1, 2, 3, 4, 5], "the fifth does")
        // One wake-up for the batch (two, should the system wake it spuriously);
        // waking for every element would make five.
        #expect(queue.takerWakeups <= 2)
    }

    @Test func aBatchWaitEndsAtItsDeadlineOrCloseWithWhatCame() {
        let queue = BlockingQueue<Int>(capacity: 3)
        queue.put(1)
        queue.put(2)
        #expect(queue.take(upTo: 0, before: Date().addingTimeInterval(30)).isEmpty)
        #expect(queue.take(upTo: 10, before: Date().addingTimeInterval(0.05)) == [1, 2])
        #expect(queue.take(upTo: 10, before: Date().addingTimeInterval(-1)).isEmpty, "a past deadline does not wait")

        // Wanting more than the capacity: a full queue ends the wait, since no more can come.
        for value in 3...5 { queue.put(value) }
        #expect(BackgroundTake(queue, upTo: 10).batch(within: 30) == [3, 4, 5])

        let take = BackgroundTake(queue, upTo: 3)
        #expect(eventually(30, every: 0.005) { queue.waiting.takers == 1 })
        queue.put(6)
        queue.close()
        #expect(take.batch(within: 30) == [6], "close ends the wait")
    }
}

@Suite struct RingBufferTests {
    @Test func iteratesInOrderAndLetsGoOfWhatItPops() {
        var ring = RingBuffer<BlockingQueueTests.Box>()
        weak var popped: BlockingQueueTests.Box?
        for value in 0..<20 { ring.append(BlockingQueueTests.Box(value)) }
        do {
            let first = ring.popFirst()
            popped = first
            #expect(first?.value == 0)
        }
        #expect(popped == nil)
        for value in 20..<40 { ring.append(BlockingQueueTests.Box(value)) }  // wraps, then grows
        #expect(ring.count == 39)
        #expect(ring.map(\.value) == Array(1..<40))
        let rebuilt = RingBuffer(ring.filter { $0.value % 2 == 0 })
        #expect(rebuilt.map(\.value) == Array(stride(from: 2, to: 40, by: 2)))
        while ring.popFirst() != nil {}
        #expect(ring.isEmpty && ring.map(\.value).isEmpty)
    }
}
