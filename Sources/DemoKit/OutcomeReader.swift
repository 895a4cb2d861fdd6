import Foundation
import Kafka

/// Reads the outcome topic on its own thread and notes, per request, when its
/// outcome was delivered (the end of the end-to-end latency).
final class OutcomeReader: @unchecked Sendable, RebalanceListener {
    private let clock: LatencyClock
    // Guarded by `lock`.
    private let lock = NSLock()
    private var subjects = Set<String>()
    private var stopped = false
    private var thread: Thread?

    init(bootstrap: String, clock: LatencyClock, topic: String = "veridoc.outcomes") throws {
        self.clock = clock
        let consumer = try KafkaConsumer(properties: [
            "bootstrap.servers": bootstrap, "group.id": "veridoc-demo-outcomes-\(UUID().uuidString.prefix(8))",
            "auto.offset.reset": "earliest", "session.timeout.ms": "6000", "fetch.wait.max.ms": "5",
        ], listener: self)
        try consumer.subscribe([topic])
        self.consumerBox = consumer
    }

    private var consumerBox: KafkaConsumer?

    func start() {
        let thread = Thread { [unowned self] in
            while !self.isStopped {
                guard let message = try? self.consumerBox?.poll(timeoutMilliseconds: 100) else { continue }
                guard let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any],
                      let subject = object["subject"] as? String else { continue }
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

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return subjects.count
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        while let thread, !thread.isFinished { Thread.sleep(forTimeInterval: 0.02) }
        consumerBox?.close()
        consumerBox = nil
    }

    func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] { [:] }
    func partitionsRevoked(_ partitions: [TopicPartition]) {}
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

    public func flush() { try? producer.flush(timeoutMilliseconds: 60_000) }
    public func close() { producer.close() }
    public var failed: Int { failures.value }
}

final class FailureCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
