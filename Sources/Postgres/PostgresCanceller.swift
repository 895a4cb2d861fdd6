import CLibPQ
import Foundation

/// Asks the server to cancel whatever statement a connection is running, from
/// any thread: the one piece of a session that may be used concurrently with
/// the connection's owning thread (libpq documents `PQcancel` as thread-safe).
/// For shutdown: the owning thread is blocked in `execute` (a long query,
/// `pg_advisory_lock`), another thread calls `cancel()`, and the blocked call
/// returns with SQLSTATE 57014.
///
/// It targets the backend that existed when it was made; after `reset()` make
/// a new one (an old one then cancels nothing). It holds no connection, so it
/// stays valid to call after the connection is closed.
public final class PostgresCanceller: @unchecked Sendable {
    /// `PGcancel*`; immutable after init and only passed to `PQcancel`, which
    /// does not modify it, so sharing it between threads is safe. Freed in deinit.
    private let handle: OpaquePointer

    init(_ cancel: OpaquePointer) {
        self.handle = cancel
    }

    deinit {
        PQfreeCancel(handle)
    }

    /// Sends the cancel request (a separate short connection). Whether a statement
    /// was running is not known: cancelling an idle session does nothing.
    public func cancel() throws(PostgresError) {
        var buffer = [CChar](repeating: 0, count: 256)
        guard PQcancel(handle, &buffer, Int32(buffer.count)) == 1 else {
            let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw PostgresError(kind: .connection, message: message.isEmpty ? "cancel request failed" : message)
        }
    }
}

extension PostgresConnection {
    /// A canceller for the current backend; see `PostgresCanceller`.
    public func makeCanceller() throws(PostgresError) -> PostgresCanceller {
        try exclusive { () throws(PostgresError) in
            guard let handle else { throw PostgresError.closed }
            guard let cancel = PQgetCancel(handle) else {
                throw PostgresError(kind: .connection, message: "no session to cancel (connection not established)")
            }
            return PostgresCanceller(cancel)
        }
    }
}
