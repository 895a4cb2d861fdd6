import Foundation
import Kafka

/// Reads the outcome topic on its own thread and notes, per request, when its
/// outcome was delivered (the end of the end-to-end latency).
package final class OutcomeReader: @unchecked Sendable, RebalanceListener {
    private let clock: LatencyClock
    // Guarded by `lock`.
    private let lock = NSLock()
    private var subjects = Set<String>()
    private var stopped = false
    private var assigned = false
    private var thread: Thread?

    package init(bootstrap: String, clock: LatencyClock, topic: String = "veridoc.outcomes") throws {
        self.clock = clock
        let consumer = try KafkaConsumer(properties: [
            "bootstrap.servers": bootstrap, "group.id": "veridoc-demo-outcomes-\(UUID().uuidString.prefix(8))",
            "auto.offset.reset": "earliest", "session.timeout.ms": "6000", "fetch.wait.max.ms": "5",
        ], listener: self)
        try consumer.subscribe([topic])
        self.consumerBox = consumer
    }

    private var consumerBox: KafkaConsumer?

    package func start() {
        let thread = Thread { [unowned self] in
            while !self.isStopped {
                guard let message = try? self.consumerBox?.poll(timeoutMilliseconds: 100) else { continue }
                guard let subject = Self.subject(of: message.value) else { continue }
                self.lock.lock()
                let first = self.subjects.insert(subject).inserted
                self.lock.unlock()
                if first { self.clock.delivered(subject) }
            }
        }
        thread.name = "veridoc-demo-outcomes"
        self.thread = thread
        thread.start()
    }

    /// The CloudEvent's `subject` (the request's event id), found without
    /// parsing the whole event: the reader must stay cheap next to the worker.
    /// Outcome JSON has sorted keys, so the top-level "subject" is the last one
    /// (after "data", which holds the issuer's subject); only "time" and
    /// "type", both strings, follow it.
    package static func subject(of value: [UInt8]) -> String? {
        let needle = Array("\"subject\":\"".utf8)
        guard value.count > needle.count else { return nil }
        var index = value.count - needle.count
        search: while index >= 0 {
            for offset in 0..<needle.count where value[index + offset] != needle[offset] { index -= 1; continue search }
            let start = index + needle.count
            var end = start
            while end < value.count, value[end] != 0x22 {
                if value[end] == 0x5c { return Self.parsedSubject(value) }
                end += 1
            }
            return end < value.count ? String(decoding: value[start..<end], as: UTF8.self) : nil
        }
        return Self.parsedSubject(value)
    }

    private static func parsedSubject(_ value: [UInt8]) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any])?["subject"] as? String
    }

    /// True once the reader's consumer has been assigned its partitions.
    package var isAssigned: Bool {
        lock.withLock { assigned }
    }

    package var count: Int {
        lock.withLock { subjects.count }
    }

    private var isStopped: Bool {
        lock.withLock { stopped }
    }

    package func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        while let thread, !thread.isFinished { Thread.sleep(forTimeInterval: 0.02) }
        consumerBox?.close()
        consumerBox = nil
    }

    /// Starts every partition at offset 0 (its reader group is new, so that
    /// is where `earliest` would start too; a trimmed log still resets to
    /// earliest). Left to librdkafka, the committed-offset lookup and the
    /// offset reset that follow an assignment would hold the first outcomes of
    /// a latency run back long enough to make the p99 of a short run.
    package func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        lock.lock()
        if !partitions.isEmpty { assigned = true }
        lock.unlock()
        return Dictionary(uniqueKeysWithValues: partitions.map { ($0, 0) })
    }
    package func partitionsRevoked(_ partitions: [TopicPartition]) {}
}

/// Produces load at a steady rate (or as fast as possible), waiting out a full
/// local queue instead of dropping.
public final class RateLimitedProducer: @unchecked Sendable {
    private let producer: KafkaProducer
    private let interval: TimeInterval?
    private var next = Date()
    private var token: UInt64 = 0
    private let failures = FailureCounter()

    public init(bootstrap: String, rate: Double?, properties: KafkaProperties = [:]) throws {
        var settings = properties
        settings["bootstrap.servers"] = bootstrap
        settings["linger.ms"] = settings["linger.ms"] ?? "5"
        let failures = self.failures
        producer = try KafkaProducer(properties: settings) { report in if report.error != nil { failures.increment() } }
        interval = rate.map { 1 / max($0, 0.001) }
    }

    /// Sends one record; `sent` runs right after it is handed to librdkafka.
    public func send(topic: String, record: LoadGenerator.Record, sent: () -> Void = {}) {
        if let interval {
            let wait = next.timeIntervalSinceNow
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            next = max(next, Date().addingTimeInterval(-1)).addingTimeInterval(interval)
        }
        token += 1
        while true {
            do {
                try producer.send(topic: topic, key: record.key, value: record.value, token: token)
                sent()
                return
            } catch {
                guard error.isRetriable else { failures.increment(); return }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
    }

    /// Looks up the topics' metadata before the first send (see `KafkaProducer.prepare`).
    public func prepare(topics: [String]) { producer.prepare(topics: topics) }
    public func flush() { try? producer.flush(timeoutMilliseconds: 60_000) }
    public func close() { producer.close() }
    public var failed: Int { failures.value }
}

package final class FailureCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    package func increment() { lock.lock(); count += 1; lock.unlock() }
    package var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
