import Foundation

/// Produce times per event id and the outcome delivery times matched to them.
package final class LatencyClock: @unchecked Sendable {
    package init() {}

    private let lock = NSLock()
    private var producedAt: [String: Date] = [:]
    private var measured: [Double] = []

    package func produced(_ id: String) {
        lock.lock()
        if producedAt[id] == nil { producedAt[id] = Date() }
        lock.unlock()
    }

    package func delivered(_ id: String) {
        lock.lock()
        if let start = producedAt.removeValue(forKey: id) { measured.append(Date().timeIntervalSince(start)) }
        lock.unlock()
    }

    package var latencies: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return measured
    }
}

package final class ProducedCounter: @unchecked Sendable {
    package init() {}

    private let lock = NSLock()
    private var count = 0
    private var finished = false
    package func increment() { lock.lock(); count += 1; lock.unlock() }
    package func finish() { lock.lock(); finished = true; lock.unlock() }
    package var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    package var isFinished: Bool { lock.lock(); defer { lock.unlock() }; return finished }
}
