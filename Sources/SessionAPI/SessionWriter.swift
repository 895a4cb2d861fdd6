import Foundation
import Postgres
import Storage
import Synchronization

/// Writes new sessions for every request thread through one connection of
/// its own: the sessions that arrive while a statement is under way go
/// together in the next one, so under load a round trip and a commit serve
/// many creations instead of one each (what a session creation costs serve
/// is mostly that round trip). A creation answers only once its row is
/// committed.
final class SessionWriter: Sendable {
    /// One creation waiting for its row.
    private final class Pending: Sendable {
        let row: SessionsTable.Row
        let done = DispatchSemaphore(value: 0)
        let failed = Atomic<Bool>(false)
        init(_ row: SessionsTable.Row) { self.row = row }
    }

    private let waiting = Mutex<(rows: [Pending], stopping: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// The most rows in one statement.
    static let maxBatch = 500
    /// How long a creation waits for its row before answering 503.
    let timeout: TimeInterval

    init(timeout: TimeInterval = 5, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.timeout = timeout
        let thread = Thread { [self] in
            let connection = ReconnectingConnection(connect)
            run(connection)
            connection.drop()
            stopped.signal()
        }
        thread.name = "session-writer"
        thread.start()
    }

    /// Stores `row`; throws `.unavailable` when the database did not take it in time.
    func insert(_ row: SessionsTable.Row) throws(SessionError) {
        let pending = Pending(row)
        let accepted = waiting.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.rows.append(pending)
            return true
        }
        guard accepted else { throw .unavailable(.database) }
        wake.signal()
        guard pending.done.wait(timeout: .now() + timeout) == .success, !pending.failed.load(ordering: .relaxed) else {
            throw .unavailable(.database)
        }
    }

    /// Ends the thread once what is waiting is written (or has failed).
    func stop() {
        waiting.withLock { $0.stopping = true }
        wake.signal()
        stopped.wait()
    }

    private func run(_ connection: ReconnectingConnection) {
        while true {
            wake.wait()
            let (batch, stopping) = waiting.withLock { state -> ([Pending], Bool) in
                let taken = Array(state.rows.prefix(Self.maxBatch))
                state.rows.removeFirst(taken.count)
                return (taken, state.stopping && state.rows.isEmpty)
            }
            if !batch.isEmpty { write(batch, connection) }
            if stopping { return }
            // More waiting than one statement took: go again without a signal.
            if waiting.withLock({ !$0.rows.isEmpty }) { wake.signal() }
        }
    }

    private func write(_ batch: [Pending], _ connection: ReconnectingConnection) {
        var failed = false
        do {
            try connection.get().execute(try SessionsTable.insert(batch.map(\.row)))
        } catch {
            failed = true
            connection.drop()
        }
        for pending in batch {
            pending.failed.store(failed, ordering: .relaxed)
            pending.done.signal()
        }
    }
}
