import Foundation
import Kafka
import KafkaMock
import Testing
import TestSupport

/// A value shared between a test and the threads it starts.
final class Locked<Value>: @unchecked Sendable {
    // Every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withValue<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
    var snapshot: Value { lock.withLock { value } }
}

/// Records rebalance events; answers `partitionsAssigned` with fixed start offsets.
final class RecordingListener: RebalanceListener, @unchecked Sendable {
    enum Event: Equatable { case assigned([TopicPartition]), revoked([TopicPartition]) }
    let events = Locked<[Event]>([])
    let owned = Locked<Set<TopicPartition>>([])
    private let startOffsets: [TopicPartition: Int64]

    init(startOffsets: [TopicPartition: Int64] = [:]) { self.startOffsets = startOffsets }

    func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        events.withValue { $0.append(.assigned(partitions)) }
        owned.withValue { $0.formUnion(partitions) }
        return startOffsets.filter { partitions.contains($0.key) }
    }

    /// Runs inside `partitionsRevoked`, e.g. to commit final offsets.
    let onRevoke = Locked<(@Sendable ([TopicPartition]) -> Void)?>(nil)

    func partitionsRevoked(_ partitions: [TopicPartition]) {
        onRevoke.snapshot?(partitions)
        events.withValue { $0.append(.revoked(partitions)) }
        owned.withValue { $0.subtract(partitions) }
    }
}

/// Collects delivery reports from a producer.
final class DeliveryLog: @unchecked Sendable {
    let reports = Locked<[KafkaProducer.DeliveryReport]>([])
    var callback: @Sendable (KafkaProducer.DeliveryReport) -> Void {
        { [reports] report in reports.withValue { $0.append(report) } }
    }
}

/// Polls a consumer on a thread of its own (as the worker does) until stopped.
final class PollingThread: @unchecked Sendable {
    let messages = Locked<[KafkaMessage]>([])
    let errors = Locked<[KafkaError]>([])
    private let running = Locked(true)
    private let done = DispatchSemaphore(value: 0)

    init(_ consumer: KafkaConsumer) {
        let thread = Thread { [messages, errors, running, done] in
            while running.snapshot {
                do throws(KafkaError) {
                    if let message = try consumer.poll(timeoutMilliseconds: 50) { messages.withValue { $0.append(message) } }
                } catch {
                    errors.withValue { $0.append(error) }
                    break
                }
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops polling; true if the thread finished in time.
    @discardableResult
    func stop(timeout: TimeInterval = 10) -> Bool {
        running.withValue { $0 = false }
        return done.wait(timeout: .now() + timeout) == .success
    }
}

/// Waits (bounded) until `condition` holds; returns whether it did.
func eventually(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// Polls on the calling thread until `count` messages arrived or the time is up.
func consume(_ consumer: KafkaConsumer, count: Int, timeout: TimeInterval) throws -> [KafkaMessage] {
    var messages: [KafkaMessage] = []
    let deadline = Date().addingTimeInterval(timeout)
    while messages.count < count, Date() < deadline {
        if let message = try consumer.poll(timeoutMilliseconds: 100) { messages.append(message) }
    }
    return messages
}

/// Test-friendly client settings for the mock cluster: fast fetches, and a
/// session timeout short enough for quick tests that the mock still assigns with.
func consumerProperties(_ cluster: MockCluster, group: String) -> KafkaProperties {
    [
        "bootstrap.servers": cluster.bootstrapServers,
        "group.id": group,
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
        "fetch.wait.max.ms": "5",
    ]
}

extension MockCluster {
    /// A cluster of `brokers` holding one topic; the test closes it.
    static func with(
        brokers: Int32, topic: String, partitions: Int32, replicationFactor: Int32 = 1
    ) throws -> MockCluster {
        let cluster = try MockCluster(brokers: brokers)
        do {
            try cluster.createTopic(topic, partitions: partitions, replicationFactor: replicationFactor)
        } catch {
            cluster.close()
            throw error
        }
        return cluster
    }
}

func producerProperties(_ cluster: MockCluster) -> KafkaProperties {
    ["bootstrap.servers": cluster.bootstrapServers]
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

/// Sends `count` messages `value-<i>` keyed `key-<i>` and waits for all reports.
func produce(
    _ cluster: MockCluster, topic: String, count: Int, from start: Int = 0, partition: Int32? = nil, timeout: Int32 = 20_000
) throws -> [KafkaProducer.DeliveryReport] {
    let log = DeliveryLog()
    let producer = try KafkaProducer(properties: producerProperties(cluster), onDelivery: log.callback)
    defer { producer.close() }
    for index in start..<(start + count) {
        try producer.send(topic: topic, partition: partition, key: bytes("key-\(index)"), value: bytes("value-\(index)"), token: UInt64(index))
    }
    try producer.flush(timeoutMilliseconds: timeout)
    return log.reports.snapshot
}
