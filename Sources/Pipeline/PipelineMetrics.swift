import DocumentTypes
import Crypto
import Foundation
import Kafka
import MDoc
import Observability
import Postgres
import Storage
import Verification

/// The worker's metrics (served at /metrics) and the signals /readyz uses.
///
/// Every label value comes from a closed set: verdicts, reason codes
/// (`Schemas/reason-codes.md`), dead-letter causes, the configured topics and
/// their partition numbers, rebalance kinds. Never event ids, tenant text,
/// or anything from a payload.
///
/// | Metric | Type | Labels |
/// | --- | --- | --- |
/// | `veridoc_events_total` | counter | `verdict`, `reason` (first reason code, or `none`) |
/// | `veridoc_process_duration_seconds` | histogram | |
/// | `veridoc_verify_in_flight` | gauge | |
/// | `veridoc_persist_queue_depth` | gauge | |
/// | `veridoc_batch_commit_duration_seconds` | histogram | |
/// | `veridoc_batch_size` | histogram | |
/// | `veridoc_batches_total` | counter | |
/// | `veridoc_events_duplicate_total` | counter | |
/// | `veridoc_outbox_backlog` | gauge | |
/// | `veridoc_outcomes_published_total` | counter | |
/// | `veridoc_dead_letters_total` | counter | `cause` |
/// | `veridoc_consumer_lag` | gauge | `topic`, `partition` |
/// | `veridoc_partitions_assigned` | gauge | |
/// | `veridoc_postgres_up` | gauge | |
/// | `veridoc_rebalances_total` | counter | `kind` (`assigned`, `revoked`) |
/// | `veridoc_purge_lag_seconds` | gauge | |
/// | `veridoc_kafka_offset_gaps_total` | counter | `kind` (`deleted`, `truncated`) |
/// | `veridoc_kafka_offsets_skipped_total` | counter | `topic`, `partition` |
/// | `veridoc_signature_memo_entries` | gauge | |
/// | `veridoc_signature_tables` | gauge | |
/// | `veridoc_partitions_stopped` | gauge | |
public final class PipelineMetrics: Sendable {
    public let registry: MetricsRegistry
    /// Readiness inputs (partitions, PostgreSQL round trips, draining).
    public let health: WorkerHealth

    /// Each stored result once, when its batch commits (duplicates of earlier
    /// deliveries are not counted again), by verdict and first reason code.
    let events: Counter
    /// Documents of stored results by docType: a catalogued one, else `other`.
    let documents: Counter
    /// Age checks of stored results by the kind of element that answered.
    let ageChecks: Counter
    /// From a record's receipt to the end of its verification.
    let processDuration: Histogram
    let verifyInFlight: Gauge
    let persistQueueDepth: Gauge
    let batchCommitDuration: Histogram
    let batchSize: Histogram
    let batches: Counter
    /// Records whose event a batch found stored already (redeliveries after a
    /// rebalance or a crash), written as nothing new.
    let duplicates: Counter
    /// Unpublished outbox rows, counted by the publisher with `SELECT count(*)
    /// … WHERE published_at IS NULL` (the `outbox_unpublished` partial index)
    /// at most every `outboxBacklogInterval` seconds, so it can lag by that much.
    let outboxBacklog: Gauge
    let outcomesPublished: Counter
    let deadLetters: Counter
    /// Results PostgreSQL refused for what they hold (none expected: the
    /// event and payload readers bound every stored field).
    let unstorableResults: Counter
    let consumerLag: Gauge
    let partitionsAssigned: Gauge
    let postgresUp: Gauge
    let rebalances: Counter
    /// Gaps found (OffsetGap), by kind.
    let offsetGaps: Counter
    /// Offsets passed over unread at deleted gaps.
    let offsetsSkipped: Counter
    let partitionsStopped: Gauge
    /// How far purging is behind, in seconds: the age past its retention
    /// deadline of the oldest value a purge pass found (0 when nothing is
    /// overdue). Set after every pass of the worker's purge loop.
    public let purgeLag: Gauge
    /// Element values deleted by the worker's purge loop.
    public let valuesPurged: Counter
    /// Revocation lists fetched, by result: `fetched`, `not_modified`, or the step that failed.
    let statusListFetches: Counter
    /// Status lookups answered from the cache (`hit`) or waiting for a fetch (`miss`).
    let statusListLookups: Counter
    /// Documents whose status could not be determined, by the step that failed.
    let statusUndetermined: Counter
    /// Age of the oldest revocation list the worker holds.
    let statusListAge: Gauge
    /// References of retained accepted results read again.
    let statusRechecked: Counter
    /// Accepted credentials found revoked or suspended later.
    let statusChangedAfterAcceptance: Counter
    /// Issuer signatures remembered as verified (`TrustedSignatures.shared.memo`).
    let signatureMemoEntries: Gauge
    /// Document signer keys with a fixed-base table (`SignatureVerifierCache.shared`).
    let signatureTables: Gauge

    static let outboxBacklogInterval: TimeInterval = 5

    public init(registry: MetricsRegistry = MetricsRegistry(), health: WorkerHealth = WorkerHealth()) {
        self.registry = registry
        self.health = health
        events = registry.counter("veridoc_events_total", help: "Verification results stored, by verdict and first reason code (none when verified).",
                                  labels: ["verdict", "reason"])
        documents = registry.counter("veridoc_documents_total", help: "Documents in stored results, by docType (a catalogued docType, else other) and the result's verdict.",
                                     labels: ["doc_type", "verdict"])
        ageChecks = registry.counter("veridoc_age_checks_total", help: "age(atLeast:) checks of stored results, by the kind of element that answered (never the answer).",
                                     labels: ["source"])
        processDuration = registry.histogram("veridoc_process_duration_seconds", help: "Time from receiving a record to the end of its verification.",
                                             buckets: Histogram.secondsBuckets)
        verifyInFlight = registry.gauge("veridoc_verify_in_flight", help: "Records admitted to the verification pool and not yet finished.")
        persistQueueDepth = registry.gauge("veridoc_persist_queue_depth", help: "Verified records waiting to be written to PostgreSQL.")
        batchCommitDuration = registry.histogram("veridoc_batch_commit_duration_seconds", help: "Duration of successful batch transactions.",
                                                 buckets: Histogram.secondsBuckets)
        batchSize = registry.histogram("veridoc_batch_size", help: "Records per committed batch.",
                                       buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2000])
        batches = registry.counter("veridoc_batches_total", help: "Committed batch transactions.")
        duplicates = registry.counter("veridoc_events_duplicate_total", help: "Records whose event was stored already (redeliveries); nothing new is written for them.")
        outboxBacklog = registry.gauge("veridoc_outbox_backlog", help: "Outcome rows not yet published (sampled every few seconds).")
        outcomesPublished = registry.counter("veridoc_outcomes_published_total", help: "Outcome events delivered to the outcome topic.")
        deadLetters = registry.counter("veridoc_dead_letters_total", help: "Records delivered to the dead-letter topic, by cause.", labels: ["cause"])
        unstorableResults = registry.counter("veridoc_results_unstorable_total", help: "Results PostgreSQL refused for their content, stored instead as event.invalid with only their id, by SQLSTATE.",
                                             labels: ["sqlstate"])
        consumerLag = registry.gauge("veridoc_consumer_lag", help: "Messages behind the high watermark per owned partition (librdkafka statistics).",
                                     labels: ["topic", "partition"])
        partitionsAssigned = registry.gauge("veridoc_partitions_assigned", help: "Partitions currently assigned to this worker.")
        postgresUp = registry.gauge("veridoc_postgres_up", help: "1 when the last PostgreSQL round trip succeeded recently, else 0.")
        rebalances = registry.counter("veridoc_rebalances_total", help: "Partition assignments and revocations.", labels: ["kind"])
        offsetGaps = registry.counter("veridoc_kafka_offset_gaps_total", help: "Partitions found with offsets this group can no longer read: deleted (retention outran the consumer) or truncated (the topic was recreated or cut).", labels: ["kind"])
        offsetsSkipped = registry.counter("veridoc_kafka_offsets_skipped_total", help: "Offsets passed over unread because the broker had deleted them, by topic and partition.", labels: ["topic", "partition"])
        partitionsStopped = registry.gauge("veridoc_partitions_stopped", help: "Assigned partitions not read since a gap (kafka.offsetGapPolicy stop).")
        purgeLag = registry.gauge("veridoc_purge_lag_seconds", help: "Age past its retention deadline of the oldest row not yet purged.")
        valuesPurged = registry.counter("veridoc_values_purged_total", help: "Element values deleted by the purge loop after their retention ended.")

        statusListFetches = registry.counter("veridoc_status_list_fetches_total",
                                             help: "Revocation list fetches, by result: fetched, not_modified, or the step that failed (fetch, http_status, too_large, token, …).",
                                             labels: ["result"])
        statusListLookups = registry.counter("veridoc_status_list_lookups_total", help: "Revocation list lookups, answered from the cache (hit) or waiting for a fetch (miss).",
                                             labels: ["cache"])
        statusUndetermined = registry.counter("veridoc_status_undetermined_total", help: "Documents whose revocation status could not be determined, by the step that failed.",
                                              labels: ["cause"])
        statusListAge = registry.gauge("veridoc_status_list_age_seconds", help: "Age of the oldest revocation list held in memory (0 when none).")
        statusRechecked = registry.counter("veridoc_status_rechecked_total", help: "References of retained accepted results read again from their refreshed lists.")
        statusChangedAfterAcceptance = registry.counter("veridoc_status_changed_after_acceptance_total",
                                                        help: "Accepted credentials found revoked or suspended later (each announced once as veridoc.credential.status-changed.v1).")
        for cache in ["hit", "miss"] { statusListLookups.initialize(cache) }
        for cause in [RecordIntake.Cause.tooLarge, RecordIntake.Cause.notUTF8, RecordIntake.Cause.noID] { deadLetters.initialize(cause) }
        for kind in ["assigned", "revoked"] { rebalances.initialize(kind) }
        for kind in OffsetGap.Kind.allCases { offsetGaps.initialize(kind.rawValue) }
        signatureMemoEntries = registry.gauge("veridoc_signature_memo_entries",
                                              help: "Issuer signatures remembered as verified, so that a credential presented again skips its ECDSA (worker.signatureMemoEntries at most).")
        signatureTables = registry.gauge("veridoc_signature_tables", help: "Document signer keys seen often enough to have a fixed-base verification table (16 at most, about 157 KB each).")
        signatureMemoEntries.sample { Double(TrustedSignatures.shared.memo.statistics.entries) }
        signatureTables.sample { Double(TrustedSignatures.shared.tables.statistics.tables) }
        partitionsStopped.sample { [health] in Double(health.stoppedPartitions) }
        postgresUp.sample { [health] in health.postgresReachable ? 1 : 0 }
        partitionsAssigned.sample { [health] in Double(health.assignedPartitions) }
    }

    /// A batch transaction committed: `stored` are the results it inserted.
    func batchCommitted(records: Int, seconds: Double, stored: [VerificationResult], duplicates duplicateCount: Int) {
        health.postgresRoundTrip(succeeded: true)
        batchCommitDuration.observe(seconds)
        batches.increment(by: 1)
        if duplicateCount > 0 { duplicates.increment(by: Double(duplicateCount)) }
        batchSize.observe(Double(records))
        var counts: [[String]: Double] = [:]
        var documentCounts: [[String]: Double] = [:]
        var ageCounts: [String: Double] = [:]
        for result in stored {
            counts[[result.verdict, result.report.reasons.first?.code.rawValue ?? "none"], default: 0] += 1
            for document in result.documents {
                // Label values from a closed set: a docType a stranger wrote is "other".
                let docType = DocumentCatalogue.shared.documentType(document.docType)?.docType ?? "other"
                documentCounts[[docType, result.verdict], default: 0] += 1
            }
            for age in result.ages {
                ageCounts[age.source, default: 0] += 1
            }
        }
        for (labels, count) in counts { events.add(count, labels: labels) }
        for (labels, count) in documentCounts { documents.add(count, labels: labels) }
        for (source, count) in ageCounts { ageChecks.add(count, labels: [source]) }
    }

    func consumerStatistics(_ statistics: KafkaStatistics, owned: Set<TopicPartition>) {
        var series: [[String]: Double] = [:]
        for (partition, lag) in statistics.consumerLag where owned.contains(partition) {
            series[[partition.topic, String(partition.partition)]] = Double(lag)
        }
        consumerLag.replaceAll(series)
    }

    func gapFound(_ gap: OffsetGap) {
        offsetGaps.increment(by: 1, gap.kind.rawValue)
        if let skipped = gap.skippedOffsets { offsetsSkipped.add(Double(skipped), labels: [gap.partition.topic, String(gap.partition.partition)]) }
    }

    func rebalanced(assigned: [TopicPartition] = [], revoked: [TopicPartition] = [], owned: Int) {
        if !assigned.isEmpty { rebalances.increment(by: 1, "assigned") }
        if !revoked.isEmpty { rebalances.increment(by: 1, "revoked") }
        for partition in revoked { consumerLag.remove(partition.topic, String(partition.partition)) }
        health.partitionsChanged(owned: owned)
    }
}

/// What /readyz answers: ready when at least one partition is assigned, none
/// is stopped at an offset gap, the worker is not draining, no VICAL a tenant
/// loaded is past its nextUpdate (plus grace), and the last PostgreSQL round trip (a committed
/// batch, or the probe's `SELECT 1` every `probeInterval`) succeeded within
/// `window` seconds.
///
/// Unchecked Sendable: all state is guarded by `lock`.
public final class WorkerHealth: @unchecked Sendable {
    public let window: TimeInterval
    public let probeInterval: TimeInterval
    private let lock = NSLock()
    private var lastSuccess: Date?
    private var lastFailure: Date?
    private var owned = 0
    private var stopped = 0
    private var draining = false
    /// Each VICAL's end of trust; set once, before the worker runs.
    private var trustLists: [TrustListDeadline] = []
    /// The time readiness is judged at (tests move it).
    private let clock: @Sendable () -> Date

    public init(window: TimeInterval = 15, probeInterval: TimeInterval = 5) {
        self.window = window
        self.probeInterval = probeInterval
        self.clock = { Date() }
    }

    /// Readiness judged at `clock()`'s time instead of the system clock's.
    public init(window: TimeInterval = 15, probeInterval: TimeInterval = 5, clock: @escaping @Sendable () -> Date) {
        self.window = window
        self.probeInterval = probeInterval
        self.clock = clock
    }

    /// The VICALs whose staleness makes the worker unready: its IACAs are no
    /// longer trusted then, so every document under them is rejected until a
    /// fresh list is deployed.
    public func watchTrustLists(_ deadlines: [TrustListDeadline]) {
        lock.withLock { trustLists = deadlines.sorted { $0.staleAfter < $1.staleAfter } }
    }

    /// The first VICAL past its nextUpdate (plus grace) at `time`, if any.
    public func staleTrustList(at time: Date) -> TrustListDeadline? {
        lock.withLock { trustLists.first { time > $0.staleAfter } }
    }

    func postgresRoundTrip(succeeded: Bool, at time: Date? = nil) {
        let time = time ?? clock()
        lock.lock()
        if succeeded { lastSuccess = time } else { lastFailure = time }
        lock.unlock()
    }

    func partitionsChanged(owned: Int) {
        lock.withLock { self.owned = owned }
    }

    /// How many assigned partitions the worker stopped reading at a gap.
    func partitionsStopped(_ count: Int) {
        lock.withLock { stopped = count }
    }

    public var stoppedPartitions: Int {
        lock.withLock { stopped }
    }

    func drainStarted() {
        lock.withLock { draining = true }
    }

    public var assignedPartitions: Int {
        lock.withLock { owned }
    }

    /// The most recent round trip succeeded, and within `window`.
    public var postgresReachable: Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let lastSuccess, clock().timeIntervalSince(lastSuccess) <= window else { return false }
        return lastFailure.map { $0 < lastSuccess } ?? true
    }

    public func readiness() -> HTTPServer.Readiness {
        lock.lock()
        let (draining, owned, stopped) = (self.draining, self.owned, self.stopped)
        lock.unlock()
        if draining { return .init(ready: false, reason: "draining") }
        if let stale = staleTrustList(at: clock()) {
            return .init(ready: false, reason: "\(stale.list) is stale: nextUpdate \(RFC3339.string(from: stale.nextUpdate)) has passed")
        }
        if owned == 0 { return .init(ready: false, reason: "no partitions assigned") }
        if stopped > 0 { return .init(ready: false, reason: "\(stopped) partition(s) stopped at an offset gap") }
        if !postgresReachable { return .init(ready: false, reason: "postgres unreachable") }
        return .ready
    }
}

/// `SELECT 1` every `probeInterval` on a connection of its own, so readiness
/// follows PostgreSQL also while no batches are written.
enum PostgresProbe {
    static func make(health: WorkerHealth, connect: @escaping @Sendable () throws -> PostgresConnection) -> PeriodicPass<Void> {
        PeriodicPass(name: "veridoc-pg-probe", interval: health.probeInterval, connect: connect,
                     pass: { _ = try $0.execute(HealthProbe.statement) },
                     report: { health.postgresRoundTrip(succeeded: (try? $0.get()) != nil) })
    }
}
