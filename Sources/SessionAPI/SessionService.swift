import Foundation
import HTTPService
import Postgres
import Storage
import Synchronization
import Verification

/// What the session routes share: the database, the producer of request
/// events, and the key that issues nonces (the one the workers check them
/// with). Readiness is both the database and the broker answering, asked at
/// most once a second however often the probe comes.
public final class SessionService: Sendable {
    let pool: ConnectionPool
    let writer: SessionWriter
    let producer: RequestProducer
    let nonceKey: IssuedNonce.Key
    /// Wakes long polls when their session changes (`LISTEN`).
    let notifier: SessionNotifier
    /// How long a waiting client goes at most without a read of its session
    /// when no notification comes: a safety net, not the way changes arrive
    /// (a lost listener connection wakes every waiter when it is back). At
    /// the longest wait, a long poll reads only on arrival, at each
    /// notification, at its session's expiry and at the end of its wait.
    let rereadInterval: TimeInterval
    /// How long past its expiry a processing session waits for its verdict (`serve.processingGraceSeconds`).
    let processingGrace: TimeInterval
    /// Where waiting long polls and event streams read their sessions again
    /// (`SessionWatch`): as many threads as the pool has connections.
    let reads: WorkQueue
    private let connect: @Sendable () throws -> PostgresConnection
    private let relay = Mutex<PeriodicPass<SubmissionRelay.Pass>?>(nil)
    private let migrated = Atomic<Bool>(false)
    private let lastReadiness = Mutex<(at: TimeInterval, state: HTTPReadiness)?>(nil)

    public init(postgres: String, preparedStatements: Bool, connections: Int, bootstrapServers: String, kafkaProperties: [String: String],
                requestTopic: String, replayKey: [UInt8], rereadInterval: TimeInterval = 30,
                processingGrace: TimeInterval = SessionsTable.processingGrace) throws {
        let connect: @Sendable () throws -> PostgresConnection = {
            try PostgresConnection(connectionString: postgres, applicationName: "veridoc-serve", preparedStatements: preparedStatements)
        }
        self.connect = connect
        pool = ConnectionPool(size: connections, connect: connect)
        reads = WorkQueue(maxThreads: connections, name: "session-reads")
        writer = SessionWriter(connect: connect)
        producer = try RequestProducer(bootstrapServers: bootstrapServers, properties: kafkaProperties, topic: requestTopic)
        nonceKey = IssuedNonce.Key(replayKey: replayKey)
        self.rereadInterval = rereadInterval
        self.processingGrace = processingGrace
        notifier = SessionNotifier(connect: connect)
    }

    /// `session` with this serve's grace for processing sessions.
    func graced(_ session: SessionsTable.Stored?) -> SessionsTable.Stored? {
        guard var session else { return nil }
        session.processingGrace = processingGrace
        return session
    }

    /// Applies the migrations the database lacks (the workers do the same,
    /// under one advisory lock), so serve may start first. False when the
    /// database cannot be reached; readiness tries again. Throws when a newer
    /// binary migrated the database.
    @discardableResult
    public func migrate() throws(SchemaError) -> Bool {
        if migrated.load(ordering: .relaxed) { return true }
        var newer: SchemaError?
        let done = (try? pool.with { connection throws -> Void in
            do {
                _ = try Migrations.apply(on: connection)
            } catch let error as SchemaError {
                newer = error
            }
        }) != nil
        if let newer { throw newer }
        if done { migrated.store(true, ordering: .relaxed) }
        return done
    }

    public func readiness() -> HTTPReadiness {
        let now = ProcessInfo.processInfo.systemUptime
        if let last = lastReadiness.withLock({ $0 }), now - last.at < 1 { return last.state }
        let state: HTTPReadiness
        let reachable: Bool? = try? migrate()
        if reachable == nil {
            state = HTTPReadiness(ready: false, reason: "database schema newer than this binary")
        } else if reachable == false {
            state = HTTPReadiness(ready: false, reason: "postgres unreachable")
        } else if (try? pool.with { connection in try connection.execute(HealthProbe.statement) }) == nil {
            state = HTTPReadiness(ready: false, reason: "postgres unreachable")
        } else if !producer.isReady(timeoutMilliseconds: 1_000) {
            state = HTTPReadiness(ready: false, reason: "kafka unreachable")
        } else {
            state = .ready
        }
        lastReadiness.withLock { $0 = (now, state) }
        return state
    }

    /// Starts the relay (`SubmissionRelay`): once a second, on a connection
    /// of its own, until `close`.
    func startRelay(interval: TimeInterval = 1, report: @escaping @Sendable (Result<SubmissionRelay.Pass, any Error>) -> Void) {
        let producer = producer, grace = processingGrace
        let pass = PeriodicPass(name: "submission-relay", interval: interval, connect: connect,
                                pass: { connection in try SubmissionRelay.pass(connection, producer: producer, grace: grace, now: Date()) }, report: report)
        relay.withLock { $0 = pass }
        pass.start()
    }

    public func close() {
        relay.withLock { $0 }?.stop()
        notifier.stop()
        writer.stop()
        producer.close()
    }
}
