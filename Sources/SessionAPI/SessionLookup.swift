import Foundation
import Storage
import Synchronization

/// `GET /v1/sessions/{id}`: where the session stands, and once the worker
/// stored the result, its outcome. `?wait=SECONDS` (at most 30) holds the
/// answer until the state changes or the time is up.
enum SessionLookup {
    static let maxWaitSeconds = 30

    /// The session as it stands. One still processing at its expiry is
    /// failed here and then, so that what a client is shown never changes
    /// after (the relay's sweep does the same for sessions nobody reads).
    static func find(tenant: String, id: UUID, service: SessionService, now: Date = Date()) throws(SessionError) -> SessionsTable.Stored? {
        try service.pool.with { connection in
            let found = service.graced(SessionsTable.stored(try connection.execute(SessionsTable.find(tenant: tenant, id: id))))
            guard let found, found.status == .processing, found.state(at: now) == .failed else { return found }
            _ = try connection.execute(SessionsTable.failOverdue(at: now, grace: service.processingGrace, only: (tenant, id)))
            return service.graced(SessionsTable.stored(try connection.execute(SessionsTable.find(tenant: tenant, id: id))))
        }
    }

    /// The most sessions one reference lookup answers.
    static let maxByReference = 100

    /// The tenant's newest sessions with `reference`, newest first.
    static func find(tenant: String, reference: String, service: SessionService) throws(SessionError) -> [SessionsTable.Stored] {
        try service.pool.with { connection in
            let result = try connection.execute(SessionsTable.find(tenant: tenant, reference: reference, limit: maxByReference))
            return (0..<result.rowCount).compactMap { service.graced(SessionsTable.stored(result, at: $0)) }
        }
    }

    /// The session as it stands, after waiting up to `wait` seconds (at
    /// least 1) for its state to change from what it was on arrival while it
    /// is unsettled, given to `answer` once. The wait holds no thread
    /// (`SessionWatch`): it is woken by the session's notification, by its
    /// expiry (when pending becomes expired, processing failed), or at the
    /// latest after `rereadInterval`; `draining` ends it early: serve is
    /// stopping, and the client gets the state as it is. The watch is
    /// returned so that a client's leaving can end it (`SessionWatch.end`).
    @discardableResult
    static func watch(tenant: String, id: UUID, wait: Int, service: SessionService, clock: @escaping @Sendable () -> Date,
                      draining: @escaping @Sendable () -> Bool,
                      answer: @escaping @Sendable (Result<SessionsTable.Stored, SessionError>) -> Void) -> SessionWatch {
        let deadline = ProcessInfo.processInfo.systemUptime + TimeInterval(wait)
        // The state on arrival: what the first read found.
        let first = Mutex<SessionState?>(nil)
        return SessionWatch(id: id, service: service) {
            do throws(SessionError) {
                guard let session = try find(tenant: tenant, id: id, service: service, now: clock()) else { throw .notFound }
                let state = session.state(at: clock())
                let arrived = first.withLock { first in
                    if first == nil { first = state }
                    return first!
                }
                let left = deadline - ProcessInfo.processInfo.systemUptime
                if draining() || state.isSettled || state != arrived || left <= 0 {
                    answer(.success(session))
                    return nil
                }
                // Until the session's expiry too: that changes its state without a notification.
                let untilExpiry = session.row.expiresAt.timeIntervalSince(clock()) + 0.05
                return min(left, service.rereadInterval, max(0.05, untilExpiry))
            } catch {
                answer(.failure(error))
                return nil
            }
        }
    }
}
