import Foundation
import Kafka

/// Reads the dead-letter topic while the run goes on and remembers each
/// dead letter's origin. Dead letters carry the poison record whole, and
/// the mock broker keeps about 5 MB a partition: read only at the end, the
/// topic held the last few dozen of several hundred. A new broker starts
/// the set again (its offsets are another log's).
final class DeadLetterWatch: @unchecked Sendable {
    private let delivery: DeliveryLedger
    private let bootstrap: @Sendable () -> String
    private let lock = NSLock()
    /// Origins ("partition/offset") of the dead letters read, for the current broker.
    private var read: Set<String> = []

    init(delivery: DeliveryLedger, bootstrap: @escaping @Sendable () -> String) {
        self.delivery = delivery
        self.bootstrap = bootstrap
    }

    /// Origins ("partition/offset") of the dead letters read from the current broker.
    var origins: Set<String> { lock.lock(); defer { lock.unlock() }; return read }

    func watch(stop: Flag) {
        var epoch = UInt64.max
        var consumer: KafkaConsumer?
        while !stop.isSet {
            if delivery.epoch != epoch {
                consumer?.close()
                consumer = nil
                epoch = delivery.epoch
                lock.lock()
                read.removeAll()
                lock.unlock()
            }
            if consumer == nil {
                consumer = topicReader(ChaosKafka.deadLetterTopic, bootstrap: bootstrap())
                if consumer == nil {
                    Thread.sleep(forTimeInterval: 0.5)
                    continue
                }
            }
            guard let message = try? consumer?.poll(timeoutMilliseconds: 200), let origin = Self.origin(of: message) else { continue }
            lock.lock()
            if delivery.epoch == epoch { read.insert(origin) }
            lock.unlock()
        }
        consumer?.close()
    }

    /// "partition/offset" of the record a dead letter stands for.
    static func origin(of message: KafkaMessage) -> String? {
        let header = { (name: String) in message.headers.first { $0.key == name }?.value.map { String(decoding: $0, as: UTF8.self) } }
        guard let partition = header("veridoc.origin.partition"), let offset = header("veridoc.origin.offset") else { return nil }
        return "\(partition)/\(offset)"
    }
}

/// A consumer of `topic` from its start, in a group of its own.
func topicReader(_ topic: String, bootstrap: String) -> KafkaConsumer? {
    guard let consumer = try? KafkaConsumer(properties: [
        "bootstrap.servers": bootstrap, "group.id": "chaos-reader-\(UUID().uuidString)", "auto.offset.reset": "earliest",
        "session.timeout.ms": "6000", "fetch.wait.max.ms": "5", "enable.auto.commit": "false", "log_level": "2",
    ], listener: FromEarliest()) else { return nil }
    guard (try? consumer.subscribe([topic])) != nil else {
        consumer.close()
        return nil
    }
    return consumer
}

final class FromEarliest: RebalanceListener, @unchecked Sendable {
    func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        Dictionary(uniqueKeysWithValues: partitions.map { ($0, Int64(0)) })
    }
    func partitionsRevoked(_ partitions: [TopicPartition]) {}
}
