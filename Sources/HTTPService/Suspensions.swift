import CMicroHTTPD
import Foundation

/// The connections a daemon holds suspended (`MHD_suspend_connection`): a
/// request whose handler runs on the work queue or whose answer comes later,
/// a stream with nothing to send. libmicrohttpd requires each suspended
/// connection to be resumed exactly once, and none to be suspended when the
/// daemon stops (it aborts the process), so every suspension and resumption
/// goes through here, under one lock: a connection is suspended only while
/// the daemon is not stopping, resumed only while it is registered, and
/// `stop` resumes every one still held.
///
/// Unchecked Sendable: every field is under `lock`; the connection pointers
/// are used only under it, while libmicrohttpd keeps them alive (a suspended
/// connection is not closed).
final class Suspensions: @unchecked Sendable {
    private let lock = NSLock()
    private var stopping = false
    private var held: [ObjectIdentifier: OpaquePointer] = [:]

    /// Suspends `connection` under `key` (called on its daemon thread, from
    /// the access handler or a content reader, as libmicrohttpd requires).
    /// False, and nothing suspended, once the daemon is stopping.
    func suspend(_ connection: OpaquePointer, key: AnyObject) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopping else { return false }
        held[ObjectIdentifier(key)] = connection
        MHD_suspend_connection(connection)
        return true
    }

    /// Resumes the connection held under `key`, first running `handOver`
    /// under the lock (to give the request its answer before the daemon
    /// thread can look). False if none is held: the daemon stopped and
    /// resumed it already.
    @discardableResult
    func resume(key: AnyObject, handOver: () -> Void = {}) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let connection = held.removeValue(forKey: ObjectIdentifier(key)) else { return false }
        handOver()
        MHD_resume_connection(connection)
        return true
    }

    /// Runs `body` under the lock: what a resumed connection reads of what `resume` handed over.
    func withLock<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    var isStopping: Bool { withLock { stopping } }

    /// How many connections are held now.
    var count: Int { withLock { held.count } }

    /// No connection is suspended from now on, and every one held is resumed.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopping = true
        for connection in held.values { MHD_resume_connection(connection) }
        held = [:]
    }
}
