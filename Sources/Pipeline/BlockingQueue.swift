import FIFO
import Foundation

/// A bounded FIFO handed between threads: `put` waits while full (backpressure,
/// not buffering), `take` waits while empty. Closing wakes every waiter.
/// A taken element leaves the queue at once (`RingBuffer`): the persister's
/// queue holds verification results, personal data included.
///
/// Waiters are woken only when what they wait for is there: a taker waiting
/// for a batch (`take(upTo:before:)`) sleeps until the batch is queued or its
/// deadline passes, not once an element, and a put or take wakes the other
/// side only if someone on it waits. A persister woken for every completion
/// while it lingers for a batch would preempt a verification thread each time.
final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    // All state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var items = RingBuffer<Element>()
    private var closed = false
    /// How many queued elements each waiting taker needs (one entry per taker).
    private var takerWants: [Int] = []
    private var waitingPutters = 0
    private var wakeups = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return items.count
    }

    /// Times a waiting taker was woken, by an element or its deadline (for
    /// tests: a batch that fills while its taker waits costs one).
    var takerWakeups: Int {
        condition.lock()
        defer { condition.unlock() }
        return wakeups
    }

    /// How many takers and putters wait now (for tests: what a thread that
    /// must block has done is observed, not guessed from a pause).
    var waiting: (takers: Int, putters: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (takerWants.count, waitingPutters)
    }

    /// False when the queue was closed before the element could be added.
    @discardableResult
    func put(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !closed && items.count >= capacity {
            waitingPutters += 1
            condition.wait()
            waitingPutters -= 1
        }
        guard !closed else { return false }
        appendLocked(element)
        return true
    }

    /// Adds past the capacity, never waiting. For producers that must not
    /// block (a Kafka delivery callback) and are bounded elsewhere.
    func putWithoutWaiting(_ element: Element) {
        condition.lock()
        defer { condition.unlock() }
        appendLocked(element)
    }

    /// The next element, waiting up to `timeout`; nil on timeout or when closed and drained.
    func take(timeout: TimeInterval) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        waitLocked(forAtLeast: 1, until: Date().addingTimeInterval(timeout))
        return popLocked()
    }

    /// Up to `max` elements, once `max` are queued, `deadline` has passed or
    /// the queue is closed, whichever comes first; empty when none came. A
    /// deadline already past takes what is queued without waiting.
    func take(upTo max: Int, before deadline: Date) -> [Element] {
        guard max > 0 else { return [] }
        condition.lock()
        defer { condition.unlock() }
        // More than the capacity never comes while producers wait for room.
        waitLocked(forAtLeast: Swift.min(max, capacity), until: deadline)
        var taken: [Element] = []
        taken.reserveCapacity(Swift.min(max, items.count))
        while taken.count < max, let element = popLocked() { taken.append(element) }
        return taken
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    private func waitLocked(forAtLeast wanted: Int, until deadline: Date) {
        guard items.count < wanted, !closed, deadline > Date() else { return }
        takerWants.append(wanted)
        defer { takerWants.remove(at: takerWants.firstIndex(of: wanted)!) }
        while items.count < wanted && !closed {
            let signalled = condition.wait(until: deadline)
            wakeups += 1
            if !signalled { break }
        }
    }

    private func appendLocked(_ element: Element) {
        items.append(element)
        // One condition serves both sides, so a broadcast also wakes any
        // waiting putters; they find the queue as full as before and sleep again.
        if takerWants.contains(where: { items.count >= $0 }) { condition.broadcast() }
    }

    private func popLocked() -> Element? {
        guard let element = items.popFirst() else { return nil }
        if waitingPutters > 0 { condition.broadcast() }
        return element
    }
}

/// Capped exponential backoff with jitter for transient failures.
struct Backoff {
    let initial: TimeInterval
    let maximum: TimeInterval
    private(set) var attempt = 0

    init(initial: TimeInterval = 0.1, maximum: TimeInterval = 5) {
        self.initial = initial
        self.maximum = maximum
    }

    mutating func next() -> TimeInterval {
        defer { attempt += 1 }
        let base = min(maximum, initial * pow(2, Double(min(attempt, 16))))
        return base * Double.random(in: 0.5...1)
    }

    mutating func reset() { attempt = 0 }
}
