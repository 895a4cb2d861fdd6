import Foundation
import Kafka
import Observability
import Postgres
import Verification

/// The thread that turns completions into durable batches: it gathers them
/// until the batch is full or the linger passes, writes the batch in one
/// transaction, and only then marks the offsets durable, hands the outcomes
/// to the publisher and offers the positions to Kafka for lag monitoring.
///
/// PostgreSQL being unavailable is retried with capped backoff, never
/// skipped: the queue fills, the pool stops, and the consumer pauses.
final class Persister: @unchecked Sendable {
    private let queue: BlockingQueue<Completion>
    private let tracker: PartitionTracker
    private let connect: @Sendable () throws -> PostgresConnection
    private let makeStore: @Sendable (PostgresConnection) -> ResultStore
    private let batchSize: Int
    private let linger: TimeInterval
    private let onCommitted: @Sendable (_ outbox: [OutboxEntry], _ positions: [TopicPartition: Int64], _ stored: Int) -> Void
    private let log: Logger
    private let metrics: PipelineMetrics?

    // Guarded by `state`.
    private let state = NSCondition()
    private var busy = false
    private var stopped = false
    private var thread: Thread?

    convenience init(
        capacity: Int, tracker: PartitionTracker, batchSize: Int, linger: TimeInterval, log: Logger,
        connect: @escaping @Sendable () throws -> PostgresConnection, makeStore: @escaping @Sendable (PostgresConnection) -> ResultStore,
        onCommitted: @escaping @Sendable ([OutboxEntry], [TopicPartition: Int64], Int) -> Void,
        metrics: PipelineMetrics? = nil
    ) {
        self.init(queue: BlockingQueue(capacity: capacity), tracker: tracker, batchSize: batchSize, linger: linger, log: log, connect: connect,
                  makeStore: makeStore, onCommitted: onCommitted, metrics: metrics)
    }

    /// Takes its completions from `queue`, which others may fill too (the
    /// publisher's delivered dead letters: `putWithoutWaiting`).
    init(
        queue: BlockingQueue<Completion>, tracker: PartitionTracker, batchSize: Int, linger: TimeInterval, log: Logger,
        connect: @escaping @Sendable () throws -> PostgresConnection, makeStore: @escaping @Sendable (PostgresConnection) -> ResultStore,
        onCommitted: @escaping @Sendable ([OutboxEntry], [TopicPartition: Int64], Int) -> Void,
        metrics: PipelineMetrics? = nil
    ) {
        self.metrics = metrics
        self.queue = queue
        self.tracker = tracker
        self.batchSize = batchSize
        self.linger = linger
        self.log = log
        self.connect = connect
        self.makeStore = makeStore
        self.onCommitted = onCommitted
    }

    func start() {
        let thread = Thread.worker("persist") { [unowned self] in self.run() }
        self.thread = thread
        thread.start()
    }

    /// Blocks while the queue is full (backpressure towards the pool).
    func enqueue(_ completion: Completion) {
        queue.put(completion)
    }

    var backlog: Int { queue.count }

    /// Waits until everything enqueued before the call is written, or `timeout` passes.
    @discardableResult
    func flush(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        state.lock()
        defer { state.unlock() }
        while (queue.count > 0 || busy) && !stopped {
            if !state.wait(until: deadline) { return queue.count == 0 && !busy }
        }
        return queue.count == 0 && !busy
    }

    /// Writes what is queued (bounded by `timeout`), then stops the thread.
    func stop(timeout: TimeInterval) {
        flush(timeout: timeout)
        state.lock()
        stopped = true
        givingUp = true
        state.broadcast()
        state.unlock()
        queue.close()
    }

    private func run() {
        let connection = ReconnectingConnection(connect)
        var backoff = Backoff()
        while true {
            guard let first = queue.take(timeout: 0.5) else {
                state.lock()
                let done = stopped
                state.broadcast()
                state.unlock()
                if done { break }
                continue
            }
            state.lock()
            busy = true
            state.unlock()
            // The rest of the batch: one wait for it to fill or the linger to pass.
            let batch = [first] + queue.take(upTo: batchSize - 1, before: Date().addingTimeInterval(linger))

            write(batch, connection: connection, backoff: &backoff)

            state.lock()
            busy = false
            state.broadcast()
            state.unlock()
        }
        connection.drop()
    }

    /// Writes `batch`, retrying until it is durable: dropping it would lose
    /// results. A batch PostgreSQL refuses for what it holds rather than for
    /// its own state is split in halves, so that one event with a field no
    /// reader bounded holds back nothing else; an event refused on its own is
    /// stored as an `event.invalid` rejection with only its id. If even that is
    /// refused, the fault is the database's, and it is retried like an outage.
    private func write(_ batch: [Completion], connection: ReconnectingConnection, backoff: inout Backoff) {
        while true {
            do {
                let positions = tracker.positions(completing: batch.map(\.ticket))
                let started = DispatchTime.now().uptimeNanoseconds
                let written = try makeStore(try connection.get()).write(batch, positions: positions)
                tracker.markDurable(batch.map(\.ticket))
                committed(written, records: batch.count, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
                onCommitted(written.outbox, positions, batch.count - written.duplicates)
                backoff.reset()
                return
            } catch {
                let failure = error as? PostgresError
                let transient = failure?.isTransient ?? false
                if transient || !connection.isConnected { metrics?.health.postgresRoundTrip(succeeded: false) }
                if !transient || !connection.isConnected { connection.drop() }
                if let failure, failure.isCausedByContent {
                    if batch.count > 1 {
                        log.warning("batch refused for its content; writing its halves apart", ["code": failure.sqlState ?? "client", "batch": "\(batch.count)"])
                        write(Array(batch[..<(batch.count / 2)]), connection: connection, backoff: &backoff)
                        write(Array(batch[(batch.count / 2)...]), connection: connection, backoff: &backoff)
                        return
                    }
                    if let stripped = batch[0].withoutContent(refusedWith: failure) {
                        log.warning("result refused for its content; storing it as event.invalid with only its id", ["code": failure.sqlState ?? "client"])
                        metrics?.unstorableResults.increment(by: 1, failure.sqlState ?? "client")
                        write([stripped], connection: connection, backoff: &backoff)
                        return
                    }
                }
                log.warning("batch write failed; retrying", ["code": failure?.sqlState ?? "connection", "transient": "\(transient)", "batch": "\(batch.count)"])
                if isGivingUp { return }
                Thread.sleep(forTimeInterval: backoff.next())
            }
        }
    }

    /// Metrics, and a debug line per rejected event (event id, configured tenant, reason codes only).
    private func committed(_ written: ResultStore.Written, records: Int, seconds: Double) {
        metrics?.batchCommitted(records: records, seconds: seconds, stored: written.stored, duplicates: written.duplicates)
        guard log.isEnabled(.debug) else { return }
        for result in written.stored where !result.isAccepted {
            log.debug("event rejected", Logger.eventFields(result))
        }
    }

    /// After `stop`, a batch that still cannot be written is given up on: its
    /// offsets stay unstored, so its events are processed again after restart.
    private var givingUp = false

    private var isGivingUp: Bool {
        state.lock()
        defer { state.unlock() }
        return givingUp
    }
}

extension Completion {
    /// The completion with its result cut down to an `event.invalid` rejection
    /// with only its id (`VerificationResult.strippedForStorage`); nil when it
    /// has no result to cut or was cut already.
    func withoutContent(refusedWith failure: PostgresError) -> Completion? {
        guard let result, result.requestID != nil, !isStripped else { return nil }
        let detail = "the result could not be stored (PostgreSQL refused it with SQLSTATE \(failure.sqlState ?? "?")); only the event id is kept"
        return Completion(ticket: ticket, key: key, receivedAt: receivedAt, result: result.strippedForStorage(detail: detail), prepared: nil, isStripped: true)
    }
}
