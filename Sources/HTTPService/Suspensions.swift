import CMicroHTTPD
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The connections a daemon holds suspended (`MHD_suspend_connection`): a
/// request whose handler runs on the work queue or whose answer comes later,
/// a stream with nothing to send. libmicrohttpd requires each suspended
/// connection to be resumed exactly once, and none to be suspended when the
/// daemon stops (it aborts the process), so every suspension and resumption
/// goes through here, under one lock: a connection is suspended only while
/// the daemon is not stopping, resumed only while it is registered, and
/// `stop` resumes every one still held.
///
/// libmicrohttpd reads nothing from a suspended connection, so a client that
/// leaves while its long poll waits would go unnoticed until the answer;
/// `sweep` (every `sweepInterval`, on a thread of its own) looks for held
/// sockets whose peer has hung up and resumes them at once: libmicrohttpd
/// then reads the end and closes them, and whoever waited is told
/// (`gone`).
///
/// Unchecked Sendable: every field is under `lock`; the connection pointers
/// and descriptors are used only under it, while libmicrohttpd keeps them
/// alive (a suspended connection is not closed).
final class Suspensions: @unchecked Sendable {
    private struct Held {
        let connection: OpaquePointer
        let descriptor: Int32
        /// Runs under the lock when the client has gone: hands the request an answer, if it needs one.
        let handOver: () -> Void
        /// Runs after the lock, once the connection is resumed: tells whoever waited.
        var gone: @Sendable () -> Void
    }

    static let sweepInterval: TimeInterval = 1
    /// POLLRDHUP (the peer shut its side down): Linux's value, which glibc's
    /// header shows only to C compiled with _GNU_SOURCE.
    static let peerHangUp: Int16 = 0x2000

    private let lock = NSCondition()
    private var stopping = false
    private var sweeping = false
    private var held: [ObjectIdentifier: Held] = [:]

    /// Suspends `connection` under `key` (called on its daemon thread, from
    /// the access handler or a content reader, as libmicrohttpd requires).
    /// False, and nothing suspended, once the daemon is stopping. If the
    /// client hangs up meanwhile, the connection is resumed after
    /// `handOver` (under the lock) and `gone` (after it).
    func suspend(_ connection: OpaquePointer, key: AnyObject, handOver: @escaping () -> Void = {},
                 gone: @escaping @Sendable () -> Void = {}) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopping else { return false }
        held[ObjectIdentifier(key)] = Held(connection: connection, descriptor: veridoc_mhd_connection_fd(connection), handOver: handOver, gone: gone)
        MHD_suspend_connection(connection)
        if !sweeping {
            sweeping = true
            let thread = Thread { [self] in sweepUntilStopped() }
            thread.name = "http-hangups"
            thread.start()
        }
        return true
    }

    /// What to run, instead of what `suspend` was given, when the client of
    /// the connection held under `key` hangs up; nothing if none is held.
    func whenGone(key: AnyObject, _ gone: @escaping @Sendable () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        held[ObjectIdentifier(key)]?.gone = gone
    }

    /// Resumes every held connection whose client has hung up (or whose
    /// socket failed); how many.
    @discardableResult
    func sweep() -> Int {
        lock.lock()
        let candidates = held.filter { $0.value.descriptor >= 0 }
        var descriptors = candidates.map { pollfd(fd: $0.value.descriptor, events: Self.peerHangUp, revents: 0) }
        var goneCallbacks: [@Sendable () -> Void] = []
        if !descriptors.isEmpty, poll(&descriptors, nfds_t(descriptors.count), 0) > 0 {
            let hungUp = Self.peerHangUp | Int16(POLLHUP) | Int16(POLLERR)
            for (entry, polled) in zip(candidates, descriptors) where polled.revents & hungUp != 0 {
                held[entry.key] = nil
                entry.value.handOver()
                MHD_resume_connection(entry.value.connection)
                goneCallbacks.append(entry.value.gone)
            }
        }
        lock.unlock()
        for gone in goneCallbacks { gone() }
        return goneCallbacks.count
    }

    private func sweepUntilStopped() {
        while true {
            lock.lock()
            _ = lock.wait(until: Date().addingTimeInterval(Self.sweepInterval))
            let done = stopping
            lock.unlock()
            if done { return }
            sweep()
        }
    }

    /// Resumes the connection held under `key`, first running `handOver`
    /// under the lock (to give the request its answer before the daemon
    /// thread can look). False if none is held: the daemon stopped and
    /// resumed it already.
    @discardableResult
    func resume(key: AnyObject, handOver: () -> Void = {}) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = held.removeValue(forKey: ObjectIdentifier(key)) else { return false }
        handOver()
        MHD_resume_connection(entry.connection)
        return true
    }

    /// Runs `body` under the lock: what a resumed connection reads of what `resume` handed over.
    func withLock<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// No connection is suspended from now on, and every one held is resumed.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopping = true
        for entry in held.values { MHD_resume_connection(entry.connection) }
        held = [:]
        lock.broadcast()
    }
}
