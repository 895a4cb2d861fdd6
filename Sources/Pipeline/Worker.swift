import Crypto
import Foundation
import Kafka
import Observability
import Postgres
import Retention
import Revocation
import Verification

/// The long-running worker: consume → verify in a pool → persist in batches →
/// publish outcomes. One thread polls Kafka (and serves rebalances); the pool's
/// threads verify; the persister thread writes PostgreSQL; the publisher
/// thread keeps the outbox moving. They hand work over through bounded queues,
/// so a slow stage slows the ones before it instead of filling memory.
///
/// This type is the worker's life: made from its configuration, run, asked to
/// stop. `WorkerStages` builds and joins the stages when it runs;
/// `WorkerLoop` is the consumer thread's loop over them.
public final class Worker: Sendable {
    public let configuration: WorkerConfiguration
    /// Served at /metrics; `metrics.health` answers /readyz.
    public let metrics: PipelineMetrics
    private let log: Logger
    private let workerID: String
    private let tracker = PartitionTracker()
    private let work: JobWork
    /// Reads the revocation lists documents name, on threads of its own.
    private let status: StatusService
    private let listStore: PostgresListStore
    private let retention: RetentionWriter
    private let state = WorkerState()

    public struct Counters: Sendable {
        public var consumed = 0
        public var stored = 0
        public var deadLettered = 0
    }

    public init(configuration: WorkerConfiguration, directory: TenantDirectory, log: Logger = Logger(), metrics: PipelineMetrics = PipelineMetrics()) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.log = log
        var parser = EventParser()
        parser.maxEventBytes = configuration.maxEventBytes
        let verifier = Verifier(directory: directory, eventParser: parser, issuedNonceKey: IssuedNonce.Key(replayKey: configuration.nonceKey))
        metrics.health.watchTrustLists(directory.tenants.flatMap(\.trustListDeadlines))
        // The memo is the process's (the issuer check reaches it from any pool thread): sized once, here.
        TrustedSignatures.shared.memo.reset(capacity: configuration.signatureMemoEntries)
        let retention = RetentionWriter(directory: directory, keys: configuration.retention.keys)
        self.retention = retention
        var statusConfiguration = configuration.statusLists
        let listStore = PostgresListStore { try configuration.connectPostgres(applicationName: "veridoc-status-lists") }
        statusConfiguration.sharedStore = listStore
        self.listStore = listStore
        statusConfiguration.observer = StatusObserver(
            fetched: { result in metrics.statusListFetches.increment(result) }, lookedUp: { hit in metrics.statusListLookups.increment(hit ? "hit" : "miss") })
        let status = StatusService(configuration: statusConfiguration)
        metrics.statusListAge.sample { status.oldestListAge() }
        self.status = status
        self.work = JobWork(verifier: verifier, intake: RecordIntake(parser: parser), retention: retention, metrics: metrics, log: log, status: status)
        let host = ProcessInfo.processInfo.hostName
        self.workerID = "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
    }

    public func requestStop() {
        state.requestStop()
        metrics.health.drainStarted()
    }

    /// Partitions this worker owns now.
    public var assignedPartitionCount: Int { tracker.assigned.count }

    public var counts: Counters { state.counters }

    /// Runs until `requestStop`, then drains within the drain timeout and leaves the group.
    public func run() throws {
        // After the drain: a job still waiting for a list then finishes undetermined, and is not committed.
        defer {
            status.stop()
            listStore.close()
        }
        let relay = RebalanceRelay()
        let stages = try WorkerStages(configuration: configuration, workerID: workerID, tracker: tracker, work: work, retention: retention, status: status,
                                      state: state, metrics: metrics, log: log, listener: relay)
        let prefetch = Int(configuration.consumerProperties["queued.max.messages.kbytes"] ?? "") ?? WorkerConfiguration.prefetchKilobytesPerThread
        let loop = WorkerLoop(configuration: configuration, workerID: workerID, stages: stages, tracker: tracker, state: state, metrics: metrics,
                              log: log, fetcher: FetcherWake(prefetchBytes: prefetch * 1024))
        relay.loop = loop
        try loop.run()
    }

    /// How long the pool may stay full before the partitions are paused: long
    /// enough that a busy pool (a slot frees every millisecond or so) never
    /// pauses, short enough that rebalances wait little for a stalled one.
    static let stallBeforePausing: TimeInterval = 1

    /// Jobs the pool admits per thread. Jobs with one key run one at a time, and a
    /// fetch delivers a run of records from one partition, which holds only the keys
    /// hashed to it: with a small window the admitted jobs queue behind a handful of
    /// keys while threads idle. Jobs are ~10 KB: 512 a thread is a few MB.
    static let admittedPerThread = 512
}

/// Rebalances reach the loop through this: the consumer takes its listener
/// when it is built, before the loop that owns it exists. It calls the
/// listener only while the loop polls or closes it, by when `loop` is set;
/// closing drops the consumer's reference to this, and with it the loop.
final class RebalanceRelay: RebalanceListener, @unchecked Sendable {
    /// Set once, before the first poll; read on the consumer's thread.
    var loop: WorkerLoop?

    func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        guard let loop else { preconditionFailure("a rebalance was served before the worker's loop existed") }
        return loop.partitionsAssigned(partitions)
    }

    func partitionsRevoked(_ partitions: [TopicPartition]) {
        guard let loop else { preconditionFailure("a rebalance was served before the worker's loop existed") }
        loop.partitionsRevoked(partitions)
    }
}

/// The consumer thread's loop: polls, hands records to the pool, holds back
/// what it has no room for, pauses and resumes partitions, passes over gaps,
/// serves rebalances, and drains at the end. Its state is the consumer
/// thread's alone (rebalances are served on it too, inside `poll`).
final class WorkerLoop: @unchecked Sendable {
    private let configuration: WorkerConfiguration
    private let workerID: String
    private let stages: WorkerStages
    private let tracker: PartitionTracker
    private let state: WorkerState
    private let metrics: PipelineMetrics
    private let log: Logger
    private var pool: VerificationPool { stages.pool }
    private var persister: Persister { stages.persister }
    private var consumer: KafkaConsumer { stages.consumer }

    /// Jobs polled that the pool had no room for: normally one, since nothing
    /// is polled while it waits.
    private var overflow: [Job] = []
    /// When `overflow` last went from empty to waiting (nil while it is empty).
    private var waitingSince: Date?
    private var paused: Set<TopicPartition> = []
    /// Partitions not read since a gap (`OffsetGapPolicy.stop`), until revoked.
    private var stopped: Set<TopicPartition> = []
    /// When to wake librdkafka's fetcher (`FetcherWake`).
    private var fetcher: FetcherWake

    init(configuration: WorkerConfiguration, workerID: String, stages: WorkerStages, tracker: PartitionTracker, state: WorkerState,
         metrics: PipelineMetrics, log: Logger, fetcher: FetcherWake) {
        self.configuration = configuration
        self.workerID = workerID
        self.stages = stages
        self.tracker = tracker
        self.state = state
        self.metrics = metrics
        self.log = log
        self.fetcher = fetcher
    }

    private var shouldStop: Bool { state.stopRequested }

    func run() throws {
        stages.start()
        // Also on a fatal error thrown out of the loop, which skips the drain.
        defer { stages.waker.stop() }
        try consumer.subscribe([configuration.requestTopic])
        log.info("worker started", ["worker": workerID, "group": configuration.groupID, "topic": configuration.requestTopic,
                                    "threads": "\(configuration.workers)"])

        var lastProgress = Date()
        while !shouldStop {
            commitToKafka()
            dispatchOverflow()
            if !overflow.isEmpty && paused.isEmpty {
                // The pool is full: records wait in librdkafka's prefetch queue,
                // which is bounded (queued.max.messages.kbytes) and stops fetching
                // when full, instead of being copied out and held here too.
                pool.waitForCapacity(timeout: 0.1)
            } else {
                do {
                    if let message = try consumer.poll(timeoutMilliseconds: fetcher.pollTimeoutMilliseconds()) {
                        fetcher.received(bytes: message.value.count + (message.key?.count ?? 0))
                        accept(message)
                    } else if paused.isEmpty, let partition = fetcher.partitionToWake(among: tracker.assigned, hasRecordsLeft: { [tracker, consumer] in
                        guard let end = consumer.cachedHighWatermark($0), let next = tracker.nextOffset($0) else { return false }
                        return end > next
                    }) {
                        stages.waker.wake(partition)
                    }
                } catch {
                    log.error("kafka consumer failed", ["code": error.name])
                    if error.isFatal { throw error }
                }
            }
            if Date().timeIntervalSince(lastProgress) > 10 {
                lastProgress = Date()
                let counts = state.counters
                log.info("progress", ["consumed": "\(counts.consumed)", "stored": "\(counts.stored)", "deadLettered": "\(counts.deadLettered)",
                                      "inFlight": "\(pool.inFlight)", "persistBacklog": "\(persister.backlog)"])
            }
        }
        drainAndStop()
    }

    private func accept(_ message: KafkaMessage) {
        let partition = message.topicPartition
        guard !stopped.contains(partition) else { return }
        // One comparison a record; the watermarks are read only at a jump.
        if let expected = tracker.nextOffset(partition), message.offset != expected,
           let gap = OffsetGap.detect(partition, expected: expected, received: message.offset, watermarks: consumer.cachedWatermarks(partition)) {
            guard passOver(gap) else { return }
        }
        guard let ticket = tracker.register(partition, offset: message.offset) else { return }
        state.consumed()
        // Read (parsed) on a pool thread: this thread only keeps the partitions flowing.
        overflow.append(Job(ticket: ticket, key: message.key, receivedAt: Date(), content: .unread(message)))
        dispatchOverflow()
    }

    /// Reports a gap loudly (an error log line, the gap metrics) and durably
    /// (`consumer_gaps`), then follows `kafka.offsetGapPolicy`. True when the
    /// record that revealed the gap is to be read.
    private func passOver(_ gap: OffsetGap) -> Bool {
        let policy = configuration.offsetGapPolicy
        var fields = ["topic": gap.partition.topic, "partition": "\(gap.partition.partition)", "kind": gap.kind.rawValue,
                      "fromOffset": "\(gap.from)", "toOffset": "\(gap.to)", "policy": policy.rawValue]
        if let skipped = gap.skippedOffsets { fields["skippedOffsets"] = "\(skipped)" }
        log.error(gap.kind == .deleted ? "records deleted by the broker before they were read"
                                       : "partition log ends before the stored position: the topic was recreated or truncated", fields)
        metrics.gapFound(gap)
        var backoff = Backoff()
        while true {
            do {
                try ResultStore.recordGap(gap, policy: policy, group: configuration.groupID, workerID: workerID, on: try stages.positions.get())
                break
            } catch {
                stages.positions.drop()
                log.warning("recording an offset gap failed; retrying", ["code": (error as? PostgresError)?.sqlState ?? "connection"])
                // Not recorded, not passed over: the next owner finds the gap again.
                if shouldStop { return false }
                Thread.sleep(forTimeInterval: backoff.next())
            }
        }
        switch policy {
        case .skip:
            // Reading goes on at the log start; the truncated log's records are
            // new records, below what the tracker has handed out.
            if gap.kind == .truncated { tracker.assign(gap.partition, startingAt: gap.to) }
            return true
        case .stop:
            stopped.insert(gap.partition)
            consumer.pause([gap.partition])
            metrics.health.partitionsStopped(stopped.count)
            return false
        }
    }

    /// Moves held jobs into the pool while it has room. A full pool is waited
    /// for without polling (see `run`); only a pool that stays full for
    /// `stallBeforePausing` (PostgreSQL down, the persister retrying) gets the
    /// partitions paused, so polling can go on serving rebalances and group
    /// membership. Pausing makes librdkafka drop what it has prefetched: done
    /// on every full pool it would throw fetched records away over and over,
    /// and holding jobs here to avoid it would keep a second copy of the prefetch.
    private func dispatchOverflow() {
        var index = 0
        while index < overflow.count && pool.hasCapacity {
            pool.submit(overflow[index])
            index += 1
        }
        if index > 0 { overflow.removeFirst(index) }
        guard !overflow.isEmpty else {
            waitingSince = nil
            if !paused.isEmpty {
                consumer.resume(Array(paused.intersection(Set(tracker.assigned)).subtracting(stopped)))
                paused.removeAll()
            }
            return
        }
        let now = Date()
        guard let since = waitingSince else {
            waitingSince = now
            return
        }
        guard paused.isEmpty, now.timeIntervalSince(since) >= Worker.stallBeforePausing else { return }
        let toPause = Set(tracker.assigned)
        guard !toPause.isEmpty else { return }
        consumer.pause(Array(toPause))
        paused = toPause
    }

    private func commitToKafka() {
        let offsets = state.takePendingKafkaCommit()
        // Called on every turn of the poll loop: the assignment (it can be a
        // thousand partitions) is asked about per offset, not copied into a set
        // each turn, which would be a noticeable share of the worker's CPU.
        guard !offsets.isEmpty else { return }
        let mine = offsets.filter { tracker.isAssigned($0.key) }
        guard !mine.isEmpty else { return }
        // For lag monitoring only; PostgreSQL holds the positions that count.
        try? consumer.commit(mine, asynchronous: true)
    }

    private func drainAndStop() {
        log.info("draining", ["inFlight": "\(pool.inFlight)", "held": "\(overflow.count)"])
        overflow.removeAll()
        let deadline = Date().addingTimeInterval(configuration.drainTimeout)
        _ = pool.waitUntilIdle(timeout: max(0.1, deadline.timeIntervalSinceNow))
        persister.flush(timeout: max(0.1, deadline.timeIntervalSinceNow))
        commitToKafka()
        stages.waker.stop()
        // rd_kafka_consumer_close waits for the group coordinator without a
        // bound: with the broker gone for good it can wait for many minutes.
        // Positions live in PostgreSQL, so a consumer that cannot leave the
        // group loses nothing: the coordinator drops it after
        // session.timeout.ms. (librdkafka closes a consumer between its
        // JoinGroup and its first SyncGroup safely, #4312, so there is no
        // assignment to wait for before leaving.)
        let consumer = self.consumer
        if !BoundedClose.run(within: max(2, deadline.timeIntervalSinceNow), { consumer.close() }) {
            log.warning("the consumer did not leave the group within the drain; leaving it to the process exit", [:])
            AbandonedConsumers.keep(consumer)
        }
        pool.stop()
        persister.stop(timeout: max(0.1, deadline.timeIntervalSinceNow))
        stages.publisher.stop(timeout: max(1, deadline.timeIntervalSinceNow))
        stages.purgeLoop.stop(timeout: max(1, deadline.timeIntervalSinceNow))
        stages.statusRecheck.stop(timeout: max(1, deadline.timeIntervalSinceNow))
        // Attempts under way end within webhooks.timeoutSeconds; the rest wait for their claim to run out.
        stages.webhooks.stop()
        stages.positions.drop()
        stages.probe.stop()
        // The samplers hold the pool and persister (and through them the publisher): let go.
        metrics.verifyInFlight.sample { 0 }
        metrics.persistQueueDepth.sample { 0 }
        let counts = state.counters
        log.info("worker stopped", ["consumed": "\(counts.consumed)", "stored": "\(counts.stored)", "deadLettered": "\(counts.deadLettered)"])
    }
}

extension WorkerLoop {
    /// Starts each partition at the position stored in PostgreSQL (0 when none
    /// is stored yet). Waits out a PostgreSQL outage rather than guessing.
    func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        var backoff = Backoff()
        var stored: [TopicPartition: Int64] = [:]
        while true {
            do {
                stored = try ResultStore.positions(of: partitions, group: configuration.groupID, on: try stages.positions.get())
                break
            } catch {
                stages.positions.drop()
                log.warning("reading stored positions failed; retrying", ["code": (error as? PostgresError)?.sqlState ?? "connection"])
                if shouldStop { break }
                Thread.sleep(forTimeInterval: backoff.next())
            }
        }
        var starts: [TopicPartition: Int64] = [:]
        for partition in partitions {
            let start = stored[partition] ?? 0
            tracker.assign(partition, startingAt: start)
            starts[partition] = start
        }
        metrics.rebalanced(assigned: partitions, owned: tracker.assigned.count)
        log.info("partitions assigned", ["partitions": partitions.map(\.description).sorted().joined(separator: ",")])
        return starts
    }

    /// Abandons work not started for the partitions, waits for work under way,
    /// and writes what finished, so no position is stored past unfinished work
    /// and the next owner starts where this one stopped.
    func partitionsRevoked(_ partitions: [TopicPartition]) {
        let revoked = Set(partitions)
        overflow.removeAll { revoked.contains($0.ticket.topicPartition) }
        let abandoned = pool.abandon { revoked.contains($0.ticket.topicPartition) }
        _ = pool.waitUntilIdle(timeout: configuration.drainTimeout) { revoked.contains($0.ticket.topicPartition) }
        persister.flush(timeout: configuration.drainTimeout)
        for partition in partitions { tracker.revoke(partition) }
        metrics.rebalanced(revoked: partitions, owned: tracker.assigned.count)
        paused.subtract(revoked)
        if !stopped.isDisjoint(with: revoked) {
            stopped.subtract(revoked)
            metrics.health.partitionsStopped(stopped.count)
        }
        log.info("partitions revoked", ["partitions": partitions.map(\.description).sorted().joined(separator: ","), "abandoned": "\(abandoned)"])
    }
}

/// A blocking close given a deadline: it runs on a thread of its own, and if
/// it has not returned in time the caller goes on without it (the thread stays
/// blocked until the process exits). True if it returned in time.
enum BoundedClose {
    static func run(within seconds: TimeInterval, _ close: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            close()
            done.signal()
        }
        thread.name = "veridoc-close"
        thread.start()
        return done.wait(timeout: .now() + seconds) == .success
    }
}

/// Consumers deliberately never destroyed (held until the process exits): those whose close did not return within the drain.
private enum AbandonedConsumers {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var consumers: [KafkaConsumer] = []

    static func keep(_ consumer: KafkaConsumer) {
        lock.lock()
        consumers.append(consumer)
        lock.unlock()
    }
}
