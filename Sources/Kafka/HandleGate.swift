import Foundation

/// Guards a C handle against being destroyed while another thread is inside a
/// call on it.
///
/// Every use of the handle runs between `enter()` and `exit()`. Closing has
/// two steps: `beginClose()` refuses entries from other threads and waits
/// until the calls already inside have left; the closing thread itself may
/// still enter (a rebalance listener commits or reads the assignment while
/// `rd_kafka_consumer_close` revokes on that thread). `finishClose()` then
/// refuses everyone, after which the owner destroys the handle.
/// Entries nest (a listener calls back into the consumer from inside `poll`),
/// which a writer-preferring read/write lock would deadlock on.
package final class HandleGate: @unchecked Sendable {
    // All mutable state is read and written with `condition` locked.
    private let condition = NSCondition()
    private var inside = 0
    private var closer: pthread_t?
    private var finished = false

    package init() {}

    /// false once the handle must not be touched by this thread.
    package func enter() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !finished else { return false }
        if let closer, pthread_equal(closer, pthread_self()) == 0 { return false }
        inside += 1
        return true
    }

    package func exit() {
        condition.lock()
        inside -= 1
        if inside == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Returns false if closing already began (close is idempotent);
    /// otherwise returns true once no other call is inside. Must not be called
    /// from inside an entered section (it would wait for itself).
    package func beginClose() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard closer == nil, !finished else { return false }
        closer = pthread_self()
        while inside > 0 { condition.wait() }
        return true
    }

    /// After this no thread enters; waits for the closing thread's own calls.
    package func finishClose() {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        while inside > 0 { condition.wait() }
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
            nameCurrentThreadForOS(name)
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

/// Names the calling thread for the OS (`top -H`, `perf --sort comm`,
/// /proc/PID/task/TID/comm): Foundation's `Thread.name` does not reach the
/// kernel on Linux, so every thread showed as the process name. Linux keeps
/// at most 15 bytes; longer names are cut. Best effort.
public func nameCurrentThreadForOS(_ name: String) {
    // pthread_setname_np is not visible to Swift without _GNU_SOURCE; /proc/thread-self/comm is the same thing.
    let descriptor = open("/proc/thread-self/comm", O_WRONLY)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}
