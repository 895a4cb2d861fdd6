import Foundation
import Kafka
import Observability
import Postgres
import Retention
import Revocation
import Synchronization
import Verification
import Webhooks

/// The worker's wiring: its stages built from the configuration and joined
/// to each other — the consumer, the verification pool, the persister (with
/// its result store), the publisher (with its producer), the PostgreSQL probe
/// and the purge loop. Nothing runs until `start`; the run loop
/// (`WorkerLoop`) drives them.
///
/// The stages hand work on through queues and callbacks, none of which
/// needs the worker itself: the persister tells the publisher what it wrote,
/// and the publisher's delivered dead letters go into the persister's queue,
/// built here first so that neither has to exist before the other.
final class WorkerStages: Sendable {
    let pool: VerificationPool
    let persister: Persister
    let publisher: Publisher
    let consumer: KafkaConsumer
    let waker: FetcherWaker
    let probe: PeriodicPass<Void>
    let purgeLoop: PeriodicPass<PurgeReport>
    let statusRecheck: PeriodicPass<StatusRechecker.Report>
    /// The consumer thread's own connection, for stored positions on assignment and for gaps.
    let positions: ReconnectingConnection
    /// Sends the webhook deliveries the batches record (idle without endpoints).
    let webhooks: WebhookDispatcher

    init(configuration: WorkerConfiguration, workerID: String, tracker: PartitionTracker, work: JobWork, retention: RetentionWriter, status: StatusService,
         state: WorkerState, metrics: PipelineMetrics, log: Logger, listener: RebalanceListener) throws {
        let connect: @Sendable () throws -> PostgresConnection = {
            try configuration.connectPostgres(applicationName: "veridoc-worker")
        }
        let store: @Sendable (PostgresConnection) -> ResultStore = { connection in
            ResultStore(connection: connection, groupID: configuration.groupID, workerID: workerID, nonceKey: configuration.nonceKey,
                        outboxClaim: configuration.outboxClaim, retention: retention, webhooks: configuration.webhooks)
        }
        let webhooks = WebhookDispatcher(directory: configuration.webhooks, connect: connect, workerID: workerID,
                                         metrics: configuration.webhooks.isEmpty ? nil : WebhookMetrics(registry: metrics.registry), log: log)
        self.webhooks = webhooks
        // One batch queued while the previous one is written is all the persister
        // can use: when it is the bottleneck a deeper queue only holds more
        // finished results (~25 KB each with their prepared writes), and when it
        // is not the queue is short.
        let completions = BlockingQueue<Completion>(capacity: configuration.batchSize)
        let publisher = try Publisher(
            configuration: configuration, workerID: workerID, log: log, connect: connect,
            onDeadLetterDelivered: { job in
                state.deadLettered()
                completions.putWithoutWaiting(Completion(ticket: job.ticket, key: job.key, receivedAt: job.receivedAt, result: nil))
            },
            metrics: metrics)
        let persister = Persister(
            queue: completions, tracker: tracker, batchSize: configuration.batchSize, linger: configuration.batchLinger,
            log: log, connect: connect, makeStore: store,
            onCommitted: { outbox, positions, stored in
                publisher.publish(outbox)
                if !outbox.isEmpty { webhooks.wake() }
                state.committed(positions: positions, stored: stored)
            },
            metrics: metrics)
        pool = VerificationPool(
            threads: configuration.workers, capacity: configuration.workers * Worker.admittedPerThread,
            work: { job, finish in work.complete(job, finish: finish) },
            deliver: { outcome in
                switch outcome {
                case .completion(let completion): persister.enqueue(completion)
                case .deadLetter(let job): publisher.deadLetter(job)
                }
            })
        self.publisher = publisher
        self.persister = persister

        var properties = configuration.consumerProperties
        properties["client.id"] = properties["client.id"] ?? "veridoc-\(workerID)"
        let consumer = try KafkaConsumer(properties: properties, listener: listener)
        consumer.onError = { error in log.warning("kafka client error", ["code": error.name]) }
        consumer.onStatistics = { statistics in metrics.consumerStatistics(statistics, owned: Set(tracker.assigned)) }
        self.consumer = consumer
        waker = FetcherWaker(consumer: consumer)
        let (pool, backlog) = (pool, persister)
        metrics.verifyInFlight.sample { Double(pool.inFlight) }
        metrics.persistQueueDepth.sample { Double(backlog.backlog) }
        probe = PostgresProbe.make(health: metrics.health, connect: connect)
        purgeLoop = RetentionPurge.loop(configuration.retention, partitions: retention.partitions, connect: connect, log: log, metrics: metrics)
        statusRecheck = StatusRecheck.loop(StatusRechecker(service: status, directory: retention.directory, webhooks: configuration.webhooks),
                                           interval: configuration.statusRecheckInterval,
                                           connect: connect, log: log, metrics: metrics)
        positions = ReconnectingConnection(connect)
    }

    /// Starts the threads of the stages (not the consumer: the loop polls it).
    func start() {
        waker.start()
        probe.start()
        persister.start()
        publisher.start()
        purgeLoop.start()
        statusRecheck.start()
        webhooks.start()
    }
}

/// What the worker's threads share: whether a stop was asked for, the
/// positions to offer Kafka, and the counts.
final class WorkerState: Sendable {
    private let state = Mutex<(stopRequested: Bool, pendingKafkaCommit: [TopicPartition: Int64], counters: Worker.Counters)>(
        (false, [:], Worker.Counters()))

    func requestStop() { state.withLock { $0.stopRequested = true } }

    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    var counters: Worker.Counters { state.withLock { $0.counters } }

    func consumed() { state.withLock { $0.counters.consumed += 1 } }

    func deadLettered() { state.withLock { $0.counters.deadLettered += 1 } }

    /// A batch is durable: its positions may go to Kafka (for lag monitoring).
    func committed(positions: [TopicPartition: Int64], stored: Int) {
        state.withLock { state in
            state.pendingKafkaCommit.merge(positions) { max($0, $1) }
            state.counters.stored += stored
        }
    }

    /// The positions committed since the last call.
    func takePendingKafkaCommit() -> [TopicPartition: Int64] {
        state.withLock { state in
            let offsets = state.pendingKafkaCommit
            state.pendingKafkaCommit.removeAll()
            return offsets
        }
    }
}
