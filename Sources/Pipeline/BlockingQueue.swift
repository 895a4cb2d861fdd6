import Foundation

/// A bounded FIFO handed between threads: `put` waits while full (backpressure,
/// not buffering), `take` waits while empty. Closing wakes every waiter.
/// A taken element leaves the queue at once (`RingBuffer`): the persister's
/// queue holds verification results, personal data included.
final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    // All state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var items = RingBuffer<Element>()
    private var closed = false
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return items.count
    }

    /// False when the queue was closed before the element could be added.
    @discardableResult
    func put(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !closed && items.count >= capacity { condition.wait() }
        guard !closed else { return false }
        items.append(element)
        condition.broadcast()
        return true
    }

    /// Adds past the capacity, never waiting. For producers that must not
    /// block (a Kafka delivery callback) and are bounded elsewhere.
    func putWithoutWaiting(_ element: Element) {
        condition.lock()
        defer { condition.unlock() }
        items.append(element)
        condition.broadcast()
    }

    /// The next element, waiting up to `timeout`; nil on timeout or when closed and drained.
    func take(timeout: TimeInterval) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while items.isEmpty && !closed {
            if !condition.wait(until: deadline) { break }
        }
        return popLocked()
    }

    /// Everything queued now (up to `max`), without waiting.
    func drain(max: Int = .max) -> [Element] {
        condition.lock()
        defer { condition.unlock() }
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

    private func popLocked() -> Element? {
        guard let element = items.popFirst() else { return nil }
        condition.broadcast()
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
