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
        let start: Bool = state.withLock { state in
            guard !state.ended else { return false }
            if state.reading {
                state.readAgain = true
                return false
            }
            state.reading = true
            state.timer?.cancel()
            state.timer = nil
            return true
        }
        if start { service.reads.submit { [self] in run() } }
    }

    /// No more reads (the client went away); idempotent.
    func end() {
        let waiter: SessionNotifier.Waiter? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            state.timer?.cancel()
            state.timer = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        if let waiter { service.notifier.unregister(waiter) }
    }

    private func run() {
        let next = read()
        guard let next else { return end() }
        let again: Bool = state.withLock { state in
            guard !state.ended else { return false }
            if state.readAgain {
                state.readAgain = false
                return true
            }
            state.reading = false
            let timer = DispatchWorkItem { [self] in wake() }
            state.timer = timer
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, next), execute: timer)
            return false
        }
        if again { service.reads.submit { [self] in run() } }
    }
}
