import Foundation

/// Guards a C handle against being destroyed while another thread is inside a
/// call on it.
///
/// Every use of the handle runs between `enter()` and `exit()`; `close()`
/// refuses new entries and waits until the calls already inside have left,
/// after which the owner may destroy the handle. Entries nest (a rebalance
/// listener may call back into the consumer from inside `poll`), which a
/// writer-preferring read/write lock would deadlock on.
final class HandleGate: @unchecked Sendable {
    // All mutable state is read and written with `condition` locked.
    private let condition = NSCondition()
    private var inside = 0
    private var closing = false

    /// false once closing has begun: the handle must not be touched.
    func enter() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closing else { return false }
        inside += 1
        return true
    }

    func exit() {
        condition.lock()
        inside -= 1
        if inside == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Returns false if another caller already closed (close is idempotent);
    /// otherwise returns true once no call is inside. Must not be called from
    /// inside an entered section (it would wait for itself).
    func close() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closing else { return false }
        closing = true
        while inside > 0 { condition.wait() }
        return true
    }

    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closing
    }
}

/// A thread owned by the caller (not the Swift concurrency pool) that can be
/// joined: librdkafka's blocking polls must not park cooperative-pool threads.
final class JoinableThread: @unchecked Sendable {
    // `finished` is only signalled once, by the thread itself, at its end.
    private let finished = DispatchSemaphore(value: 0)
    private let thread: Thread

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let finished = self.finished
        thread = Thread {
            body()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    func join() { finished.wait() }
}

/// Milliseconds left until `deadline`, clamped to librdkafka's Int32 timeouts.
func millisecondsLeft(until deadline: DispatchTime) -> Int32 {
    let now = DispatchTime.now()
    guard deadline > now else { return 0 }
    return Int32(clamping: (deadline.uptimeNanoseconds - now.uptimeNanoseconds + 999_999) / 1_000_000)
}
