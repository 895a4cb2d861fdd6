import Dispatch
import Foundation
import Synchronization

/// Reads a session again whenever it may have changed, holding no thread in
/// between: at its notification (`SessionNotifier`), and at the time the
/// last read asked for (its expiry, a heartbeat, the end of a wait, the
/// re-read safety net). `read` runs on the service's read queue, one read at
/// a time; a wake during a read runs one more read after it. It returns the
/// seconds until the next timed read, or nil when the watch is over.
///
/// The waiter is registered before the first read, so a change committed
/// after that read still wakes the watch.
final class SessionWatch: Sendable {
    private struct State {
        var reading = false
        var readAgain = false
        var ended = false
        var timer: DispatchWorkItem?
        var waiter: SessionNotifier.Waiter?

        /// A wake: whether a read starts now; during a read, one more is owed instead.
        mutating func woken() -> Bool {
            guard !ended else { return false }
            guard !reading else {
                readAgain = true
                return false
            }
            reading = true
            stopTimer()
            return true
        }

        /// A read returned: whether another starts at once (a wake came
        /// during it); if not, `wake` is due after `seconds`.
        mutating func readDone(nextIn seconds: TimeInterval, wake: @escaping @Sendable () -> Void) -> Bool {
            if ended { return false }
            if readAgain {
                readAgain = false
                return true
            }
            reading = false
            let timer = DispatchWorkItem(block: wake)
            self.timer = timer
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds), execute: timer)
            return false
        }

        mutating func stopTimer() {
            timer?.cancel()
            timer = nil
        }
    }

    private let service: SessionService
    private let read: @Sendable () -> TimeInterval?
    private let state = Mutex(State())

    /// Registers for the session's notifications and queues the first read.
    init(id: UUID, service: SessionService, read: @escaping @Sendable () -> TimeInterval?) {
        self.service = service
        self.read = read
        // The waiter holds the watch until it ends (`end` unregisters it).
        let waiter = service.notifier.register(id) { [self] in wake() }
        state.withLock { $0.waiter = waiter }
        wake()
    }

    /// Reads again now (or after the read under way).
    func wake() {
        if state.withLock({ $0.woken() }) { service.reads.submit { [self] in run() } }
    }

    /// No more reads (the client went away); idempotent.
    func end() {
        let waiter: SessionNotifier.Waiter? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            state.stopTimer()
            defer { state.waiter = nil }
            return state.waiter
        }
        if let waiter { service.notifier.unregister(waiter) }
    }

    private func run() {
        let next = read()
        guard let next else { return end() }
        if state.withLock({ $0.readDone(nextIn: next) { [self] in wake() } }) { service.reads.submit { [self] in run() } }
    }
}
