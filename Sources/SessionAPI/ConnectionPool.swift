import Foundation
import Postgres
import Synchronization

/// A fixed number of PostgreSQL connections shared by the daemon's
/// connection threads: a request borrows one for its statements and gives it
/// back, and waits (up to `wait`) when all are out, so the database sees at
/// most `size` sessions from this process however many clients there are.
/// A connection found broken is made again on its next loan.
final class ConnectionPool: Sendable {
    private let idle: Mutex<[ReconnectingConnection]>
    private let available: DispatchSemaphore
    let wait: TimeInterval

    init(size: Int, wait: TimeInterval = 5, connect: @escaping @Sendable () throws -> PostgresConnection) {
        idle = Mutex((0..<max(1, size)).map { _ in ReconnectingConnection(connect) })
        available = DispatchSemaphore(value: max(1, size))
        self.wait = wait
    }

    /// Runs `body` on a borrowed connection. Throws `.unavailable` when none
    /// came free in time or the database cannot be reached; a statement that
    /// failed drops the connection, so the next loan starts clean.
    func with<T>(_ body: (PostgresConnection) throws -> T) throws(SessionError) -> T {
        guard available.wait(timeout: .now() + wait) == .success else { throw .unavailable(.database) }
        let holder = idle.withLock { $0.removeLast() }
        defer {
            idle.withLock { $0.append(holder) }
            available.signal()
        }
        do {
            return try body(try holder.get())
        } catch let error as SessionError {
            throw error
        } catch {
            holder.drop()
            throw .unavailable(.database)
        }
    }
}
