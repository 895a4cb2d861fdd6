import Foundation
import Kafka
import Observability
import Postgres
import Storage

/// Publishes outcome events from the outbox and dead letters, both through one
/// idempotent producer (`acks=all`).
///
/// Outcomes: rows the persister just wrote are sent at once; a delivered
/// row is deleted. A sweep claims rows still there (a crash, a failed
/// delivery) once their claim lapses, so several workers share the outbox
/// safely (`FOR UPDATE SKIP LOCKED`) and nothing stays unpublished. Delivery
/// is at least once; consumers drop duplicates by CloudEvent id.
///
/// Delivered rows are deleted rather than marked: a published outcome is on
/// the topic and its facts are in `results`, so the row (with its payload and
/// sealed claims) has no reader left. Marking would keep every payload for
/// ever, and each mark would write a new version of the whole row, payload
/// included.
///
/// Dead letters: the original record, verbatim, with headers naming its origin
/// and a reason code — never decrypted data or error text. Its offset counts as
/// done only when the dead letter is delivered.
final class Publisher: @unchecked Sendable {
    private let configuration: WorkerConfiguration
    private let workerID: String
    private let log: Logger
    private let connect: @Sendable () throws -> PostgresConnection
    private let onDeadLetterDelivered: @Sendable (Job) -> Void
    private let metrics: PipelineMetrics?
    private let producer: KafkaProducer

    // Guarded by `lock`.
    private let lock = NSCondition()
    private var nextToken: UInt64 = 1
    private var pendingOutcomes: [UInt64: OutboxEntry] = [:]
    private var pendingDeadLetters: [UInt64: Job] = [:]
    private var delivered: [String] = []
    private var retryOutcomes: [OutboxEntry] = []
    private var retryDeadLetters: [Job] = []
    /// Dead letters whose record is larger than the producer or broker accepts:
    /// resent without the value, so their offsets can complete.
    private var omitValue: Set<PartitionTracker.Ticket> = []
    private var stopped = false
    private var thread: Thread?
    private(set) var publishedCount = 0
    private(set) var deadLetterCount = 0

    init(
        configuration: WorkerConfiguration, workerID: String, log: Logger, connect: @escaping @Sendable () throws -> PostgresConnection,
        onDeadLetterDelivered: @escaping @Sendable (Job) -> Void, metrics: PipelineMetrics? = nil
    ) throws(KafkaError) {
        self.metrics = metrics
        self.configuration = configuration
        self.workerID = workerID
        self.log = log
        self.connect = connect
        self.onDeadLetterDelivered = onDeadLetterDelivered
        let reports = DeliveryReports()
        producer = try KafkaProducer(properties: configuration.producerProperties) { report in
            reports.publisher?.handle(token: report.token, failed: report.error != nil, tooLarge: report.error.map(Self.isTooLarge) ?? false)
        }
        // No report can arrive before this: nothing is produced until init returns.
        reports.publisher = self
    }

    /// Where the producer's delivery callback finds the publisher, which does
    /// not exist yet when the producer that it owns is made.
    private final class DeliveryReports: @unchecked Sendable {
        weak var publisher: Publisher?
    }

    func start() {
        let thread = Thread.worker("outbox") { [unowned self] in self.run() }
        self.thread = thread
        thread.start()
    }

    /// Outcome rows just written by this worker (already claimed by it).
    func publish(_ entries: [OutboxEntry]) {
        for entry in entries { send(entry) }
    }

    func deadLetter(_ job: Job) {
        guard case .deadLetter(let letter) = job.content else { return }
        let record = letter.record
        let origin = record.topicPartition
        lock.lock()
        let omit = omitValue.contains(job.ticket)
        lock.unlock()
        var headers = record.headers + [
            KafkaHeader("veridoc.reason", Array("event.invalid".utf8)),
            KafkaHeader("veridoc.cause", Array(letter.cause.utf8)),
            KafkaHeader("veridoc.origin.topic", Array(origin.topic.utf8)),
            KafkaHeader("veridoc.origin.partition", Array(String(origin.partition).utf8)),
            KafkaHeader("veridoc.origin.offset", Array(String(record.offset).utf8)),
            // Kafka Connect's names, which DLQ tools read.
            KafkaHeader("__connect.errors.topic", Array(origin.topic.utf8)),
            KafkaHeader("__connect.errors.partition", Array(String(origin.partition).utf8)),
            KafkaHeader("__connect.errors.offset", Array(String(record.offset).utf8)),
        ]
        if omit { headers.append(KafkaHeader("veridoc.value.omitted", Array(String(record.value.count).utf8))) }
        let token = register { $0.pendingDeadLetters[$1] = job }
        sendWithBackpressure(topic: configuration.deadLetterTopic, key: record.key, value: omit ? [] : record.value, headers: headers, token: token)
    }

    private func send(_ entry: OutboxEntry) {
        let token = register { $0.pendingOutcomes[$1] = entry }
        sendWithBackpressure(
            topic: configuration.outcomeTopic, key: entry.key, value: Array(entry.payload.utf8),
            headers: [KafkaHeader("content-type", Array("application/cloudevents+json; charset=UTF-8".utf8))], token: token)
    }

    private func register(_ add: (Publisher, UInt64) -> Void) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        let token = nextToken
        nextToken += 1
        add(self, token)
        return token
    }

    /// A full local queue is waited out, not dropped.
    private func sendWithBackpressure(topic: String, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], token: UInt64) {
        var backoff = Backoff(initial: 0.01, maximum: 0.5)
        while true {
            do {
                try producer.send(topic: topic, key: key, value: value, headers: headers, token: token)
                return
            } catch where error.isRetriable {
                Thread.sleep(forTimeInterval: backoff.next())
            } catch {
                let tooLarge = Self.isTooLarge(error)
                // A record too large is reported once where it is handled.
                if !tooLarge { log.error("produce failed", ["topic": topic, "code": error.name]) }
                handle(token: token, failed: true, tooLarge: tooLarge)
                return
            }
        }
    }

    /// MSG_SIZE_TOO_LARGE (10) or RECORD_LIST_TOO_LARGE (18): sending the same bytes again cannot succeed.
    static func isTooLarge(_ error: KafkaError) -> Bool { error.code == 10 || error.code == 18 }

    private func handle(token: UInt64, failed: Bool, tooLarge: Bool = false) {
        lock.lock()
        var deliveredLetter: Job?
        // Delivered outcomes are removed in batches (the publisher thread wakes at
        // least every markInterval anyway): waking it per delivery report would make
        // one statement, one transaction and one WAL flush per handful of events.
        var wake = true
        if let entry = pendingOutcomes.removeValue(forKey: token) {
            if !failed {
                delivered.append(entry.id)
                publishedCount += 1
                metrics?.outcomesPublished.increment()
                wake = delivered.count >= Self.markBatch || (stopped && pendingOutcomes.isEmpty)
            } else if tooLarge {
                // Outcomes are reduced below OutcomeEvent.maxBytes, so only a topic
                // configured below that refuses one. Resending every markInterval
                // would fail the same way: the row waits for the sweep (once a
                // claim period) and for the operator, who is told once per attempt.
                log.warning("outcome larger than the outcome topic accepts; left in the outbox for the sweep",
                            ["event": entry.eventID, "bytes": "\(entry.payload.utf8.count)"])
            } else {
                retryOutcomes.append(entry)
            }
        } else if let job = pendingDeadLetters.removeValue(forKey: token) {
            if !failed {
                deadLetterCount += 1
                deliveredLetter = job
                omitValue.remove(job.ticket)
                if case .deadLetter(let letter) = job.content { metrics?.deadLetters.increment(by: 1, letter.cause) }
            } else {
                // Too large for the producer or the broker: retrying the same bytes would
                // hold the partition's position forever; the record stays readable at its origin offset.
                if tooLarge && omitValue.insert(job.ticket).inserted, case .deadLetter(let letter) = job.content {
                    log.warning("dead letter too large; sending it without its value", ["bytes": "\(letter.record.value.count)",
                                "partition": "\(letter.record.topicPartition.partition)", "offset": "\(letter.record.offset)"])
                }
                retryDeadLetters.append(job)
            }
        }
        if wake { lock.broadcast() }
        lock.unlock()
        // Outside the lock: handing over may wait for the persister, which may be publishing.
        if let deliveredLetter { onDeadLetterDelivered(deliveredLetter) }
    }

    /// How often delivered outcomes are removed from the outbox, at most (unless `markBatch` are waiting).
    static let markInterval: TimeInterval = 0.2
    static let markBatch = 2000

    /// Removes delivered rows, resends failed sends, and sweeps the outbox.
    private func run() {
        // Without this the first outcomes after a start wait about a second for the topic's metadata.
        producer.prepare(topics: [configuration.outcomeTopic, configuration.deadLetterTopic])
        let connection = ReconnectingConnection(connect)
        var lastSweep = Date.distantPast
        var lastBacklog = Date.distantPast
        while true {
            lock.lock()
            _ = lock.wait(until: Date().addingTimeInterval(Self.markInterval))
            let ids = delivered
            delivered.removeAll()
            let outcomesToRetry = retryOutcomes
            retryOutcomes.removeAll()
            let lettersToRetry = retryDeadLetters
            retryDeadLetters.removeAll()
            let done = stopped && pendingOutcomes.isEmpty && ids.isEmpty
            lock.unlock()

            for entry in outcomesToRetry { send(entry) }
            for job in lettersToRetry { deadLetter(job) }
            do {
                if !ids.isEmpty {
                    _ = try connection.get().execute(OutboxTable.deleteDelivered(ids: ids))
                }
                if Date().timeIntervalSince(lastSweep) > max(1, configuration.outboxClaim / 3), !isStopped {
                    lastSweep = Date()
                    try sweep(try connection.get())
                }
                if let metrics, Date().timeIntervalSince(lastBacklog) >= PipelineMetrics.outboxBacklogInterval {
                    lastBacklog = Date()
                    let backlog = try connection.get().execute(OutboxTable.countUnpublished)
                    metrics.outboxBacklog.set(Double(backlog.int(0, "count") ?? 0))
                }
            } catch {
                // The removals are retried with the next delivery; rows left behind are republished later, never lost.
                lock.lock()
                delivered.append(contentsOf: ids)
                lock.unlock()
                connection.drop()
                log.warning("outbox bookkeeping failed; retrying", ["code": (error as? PostgresError)?.sqlState ?? "connection"])
                Thread.sleep(forTimeInterval: 0.5)
            }
            if done { break }
        }
        connection.drop()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func sweep(_ connection: PostgresConnection) throws {
        let claimed = try connection.execute(OutboxTable.claimExpired(by: workerID, forSeconds: configuration.outboxClaim))
        guard claimed.rowCount > 0 else { return }
        log.info("republishing unpublished outcomes", ["count": "\(claimed.rowCount)"])
        for row in 0..<claimed.rowCount {
            guard let id = claimed.string(row, "id"), let eventID = claimed.string(row, "event_id"), let payload = claimed.string(row, "payload") else { continue }
            send(OutboxEntry(id: id, eventID: eventID, key: claimed.bytes(row, "kafka_key"), payload: payload, hasClaims: false))
        }
    }

    /// Waits for outstanding deliveries (bounded), removes their rows, and closes the producer.
    func stop(timeout: TimeInterval) {
        try? producer.flush(timeoutMilliseconds: Int32(min(timeout, 600) * 1000))
        lock.lock()
        stopped = true
        lock.broadcast()
        lock.unlock()
        let deadline = Date().addingTimeInterval(timeout)
        while let thread, !thread.isFinished, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        producer.close(flushTimeoutMilliseconds: 1000)
    }

    var outstanding: Int {
        lock.lock()
        defer { lock.unlock() }
        return pendingOutcomes.count + pendingDeadLetters.count
    }
}
