import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What keeps a daemon's connections from being held by clients that never
/// finish a request. libmicrohttpd's own timeout is an idle timeout: a client
/// sending a byte a second (slowloris) resets it forever, and every such
/// client holds a connection slot. So
/// each connection is tracked here from accept to close, in one of three
/// phases:
///
/// - `reading`: the headers or the body of a request are still coming. It has
///   a deadline (the header deadline from accept or from the end of the
///   previous response, then the body deadline once the headers are in);
/// - `handling`: the handler runs (a database round trip, a long poll). No
///   deadline here: the handler bounds its own time;
/// - `sending`: the response goes out; the body deadline again.
///
/// A watchdog thread shuts down (shutdown(2), never close(2): the socket stays
/// libmicrohttpd's) every connection past its deadline. And when the
/// connections open reach the limit less the reserve, each new one evicts the
/// connection that has been reading or sending the longest: a probe or a
/// client that sends its request at once finishes its headers in
/// milliseconds, so it is never the oldest, and the reserve keeps the daemon
/// below libmicrohttpd's hard limit (where it would refuse new connections
/// outright) while evicted sockets close.
///
/// A connection's socket is shut down only while it is registered here, under
/// `lock`; libmicrohttpd reports a close (`closed`) before it closes the
/// socket, so a descriptor number is never shut down after it was reused.
///
/// Unchecked Sendable: all state is under `lock`; `Tracked` objects are
/// read and written only under it.
final class ConnectionGuard: @unchecked Sendable {
    enum Phase { case reading, handling, sending }

    /// One connection, kept in libmicrohttpd's socket context from accept to close.
    final class Tracked {
        let descriptor: Int32
        var phase = Phase.reading
        var deadline: TimeInterval
        /// When the current phase began, in eviction order (oldest first).
        var order: UInt64 = 0
        var registered = true
        var shut = false

        init(descriptor: Int32, deadline: TimeInterval) {
            self.descriptor = descriptor
            self.deadline = deadline
        }
    }

    struct Settings: Sendable {
        var headerTimeout: TimeInterval
        var bodyTimeout: TimeInterval
        /// Connections open (not yet shut down) above which a new one evicts the oldest evictable.
        var evictionThreshold: Int
    }

    private let settings: Settings
    private let clock: @Sendable () -> TimeInterval
    private let lock = NSCondition()
    private var open = 0
    /// Connections entering `reading` or `sending`, in order; entries whose
    /// connection has moved on since are skipped when met (lazy deletion).
    private var queue: [(order: UInt64, connection: Tracked)] = []
    private var head = 0
    private var nextOrder: UInt64 = 0
    private var tracked: [ObjectIdentifier: Tracked] = [:]
    private var stopping = false
    /// Connections shut down for a deadline, and evicted to make room (for tests and logs).
    private(set) var timedOut = 0
    private(set) var evicted = 0

    init(settings: Settings, clock: @escaping @Sendable () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }) {
        self.settings = settings
        self.clock = clock
    }

    func start() {
        let thread = Thread { [self] in watch() }
        thread.name = "http-guard"
        thread.start()
    }

    /// Ends the watchdog; connections still open are libmicrohttpd's to close.
    func stop() {
        lock.withLock {
            stopping = true
            lock.broadcast()
        }
    }

    /// A connection was accepted: tracked in `reading` with the header deadline.
    func opened(descriptor: Int32) -> Tracked {
        lock.withLock {
            let connection = Tracked(descriptor: descriptor, deadline: clock() + settings.headerTimeout)
            tracked[ObjectIdentifier(connection)] = connection
            open += 1
            enqueue(connection)
            while open > settings.evictionThreshold, let oldest = oldestEvictable() {
                shut(oldest)
                evicted += 1
            }
            return connection
        }
    }

    /// libmicrohttpd is about to close the connection's socket.
    func closed(_ connection: Tracked) {
        lock.withLock {
            guard connection.registered else { return }
            connection.registered = false
            tracked[ObjectIdentifier(connection)] = nil
            if !connection.shut { open -= 1 }
        }
    }

    /// The headers are in: the body (if any) has the body deadline.
    func headersReceived(_ connection: Tracked) { enter(connection, .reading, timeout: settings.bodyTimeout) }
    /// The handler runs: no deadline, never evicted.
    func handling(_ connection: Tracked) { enter(connection, .handling, timeout: 0) }
    /// A response is queued: it has the body deadline to go out.
    func sending(_ connection: Tracked) { enter(connection, .sending, timeout: settings.bodyTimeout) }
    /// A request ended; on a kept-alive connection the next one has the header deadline.
    func requestEnded(_ connection: Tracked) { enter(connection, .reading, timeout: settings.headerTimeout) }

    var counts: (open: Int, timedOut: Int, evicted: Int) { lock.withLock { (open, timedOut, evicted) } }

    /// Requests whose handler runs or whose response goes out now (a drain waits for them).
    var requestsUnderWay: Int {
        lock.withLock { tracked.values.count { !$0.shut && ($0.phase == .handling || $0.phase == .sending) } }
    }

    private func enter(_ connection: Tracked, _ phase: Phase, timeout: TimeInterval) {
        lock.withLock {
            guard connection.registered, !connection.shut else { return }
            connection.phase = phase
            connection.deadline = clock() + timeout
            if phase != .handling { enqueue(connection) }
        }
    }

    /// Under `lock`.
    private func enqueue(_ connection: Tracked) {
        nextOrder += 1
        connection.order = nextOrder
        queue.append((nextOrder, connection))
    }

    /// Under `lock`: the connection that entered `reading` or `sending` first
    /// and is still there, or nil. Amortized constant time: each queue entry
    /// is passed over once.
    private func oldestEvictable() -> Tracked? {
        while head < queue.count {
            let entry = queue[head]
            head += 1
            let connection = entry.connection
            if connection.registered, !connection.shut, connection.order == entry.order, connection.phase != .handling { return connection }
        }
        return nil
    }

    /// Under `lock`.
    private func shut(_ connection: Tracked) {
        connection.shut = true
        open -= 1
        // The connection's thread wakes with end of stream and libmicrohttpd closes it.
        _ = shutdown(connection.descriptor, Int32(SHUT_RDWR))
    }

    private func watch() {
        lock.lock()
        defer { lock.unlock() }
        while !stopping {
            let now = clock()
            for connection in tracked.values where !connection.shut && connection.phase != .handling && connection.deadline <= now {
                shut(connection)
                timedOut += 1
            }
            // The queue keeps an entry for every phase a connection entered; only
            // the latest of each is live, so it is rebuilt when mostly stale.
            if queue.count - head > 2 * tracked.count + 1_024 {
                queue = queue[head...].filter { entry in
                    let connection = entry.connection
                    return connection.registered && !connection.shut && connection.order == entry.order && connection.phase != .handling
                }
                head = 0
            }
            _ = lock.wait(until: Date().addingTimeInterval(0.1))
        }
    }
}
