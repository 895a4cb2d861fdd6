import Foundation
import Postgres

/// The worker's purge thread: one `Purger` pass every interval on its own
/// connection, so expiry never waits for, or holds up, the write path.
/// A failed pass is logged by the caller's hook and retried next interval.
///
/// Unchecked Sendable: `stopped` and `thread` are guarded by `state`.
public final class PurgeLoop: @unchecked Sendable {
    private let interval: TimeInterval
    private let purger: Purger
    private let connect: @Sendable () throws -> PostgresConnection
    private let onPass: @Sendable (Result<PurgeReport, any Error>) -> Void
    private let state = NSCondition()
    private var stopped = false
    private var running = false

    public init(
        interval: TimeInterval, purger: Purger, connect: @escaping @Sendable () throws -> PostgresConnection,
        onPass: @escaping @Sendable (Result<PurgeReport, any Error>) -> Void
    ) {
        self.interval = interval
        self.purger = purger
        self.connect = connect
        self.onPass = onPass
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "veridoc-purge"
        state.lock()
        running = true
        state.unlock()
        thread.start()
    }

    /// Asks the thread to stop and waits (bounded) for a pass in progress.
    public func stop(timeout: TimeInterval = 10) {
        state.lock()
        stopped = true
        state.broadcast()
        let deadline = Date().addingTimeInterval(timeout)
        while running && state.wait(until: deadline) {}
        state.unlock()
    }

    private func run() {
        let connection = ReconnectingConnection(connect)
        while true {
            do {
                onPass(.success(try purger.pass(now: Date(), on: try connection.get())))
            } catch {
                connection.drop()
                onPass(.failure(error))
            }
            state.lock()
            let deadline = Date().addingTimeInterval(interval)
            while !stopped && state.wait(until: deadline) {}
            let done = stopped
            state.unlock()
            if done { break }
        }
        connection.drop()
        state.lock()
        running = false
        state.broadcast()
        state.unlock()
    }
}
