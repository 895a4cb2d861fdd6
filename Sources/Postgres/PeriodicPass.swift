import Foundation

/// One pass of work on a connection of its own, every `interval`, on a thread
/// of its own, until stopped: the worker's database probe and its purge.
/// A failed pass drops the connection (the next pass opens a new one) and is
/// reported like a successful one, so the owner decides what a failure means.
///
/// Unchecked Sendable: `stopped` and `running` are guarded by `state`.
public final class PeriodicPass<Output>: @unchecked Sendable {
    private let name: String
    private let interval: TimeInterval
    private let connect: @Sendable () throws -> PostgresConnection
    private let pass: @Sendable (PostgresConnection) throws -> Output
    private let report: @Sendable (Result<Output, any Error>) -> Void
    private let state = NSCondition()
    private var stopped = false
    private var running = false

    public init(name: String, interval: TimeInterval, connect: @escaping @Sendable () throws -> PostgresConnection,
                pass: @escaping @Sendable (PostgresConnection) throws -> Output,
                report: @escaping @Sendable (Result<Output, any Error>) -> Void) {
        self.name = name
        self.interval = interval
        self.connect = connect
        self.pass = pass
        self.report = report
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = name
        state.lock()
        running = true
        state.unlock()
        thread.start()
    }

    /// Asks the thread to stop and waits (bounded) for a pass in progress and
    /// the connection's close.
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
            let result = Result { () throws(any Error) -> Output in try pass(connection.get()) }
            if case .failure = result { connection.drop() }
            report(result)
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
