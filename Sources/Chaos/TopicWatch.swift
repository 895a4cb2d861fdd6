import Crypto
import Foundation
import Kafka

/// Reads a topic while the run goes on and remembers what each record says
/// (`read`: a key and a value, or nil to pass it over). The mock broker keeps
/// about 5 MB a partition and deletes older records, so a topic read only at
/// the end may no longer hold what a long run wrote to it (dead letters carry
/// the poison record whole; outcome events add up). A new broker starts the
/// record again (its offsets are another log's).
final class TopicWatch: @unchecked Sendable {
    let topic: String
    private let delivery: DeliveryLedger
    private let bootstrap: @Sendable () -> String
    private let extract: @Sendable (KafkaMessage) -> (key: String, value: String)?
    private let lock = NSLock()
    /// What was read from the current broker, by key.
    private var read: [String: String] = [:]

    init(topic: String, delivery: DeliveryLedger, bootstrap: @escaping @Sendable () -> String,
         read extract: @escaping @Sendable (KafkaMessage) -> (key: String, value: String)?) {
        self.topic = topic
        self.delivery = delivery
        self.bootstrap = bootstrap
        self.extract = extract
    }

    /// Dead letters: their origins ("partition/offset").
    static func deadLetters(delivery: DeliveryLedger, bootstrap: @escaping @Sendable () -> String) -> TopicWatch {
        TopicWatch(topic: ChaosKafka.deadLetterTopic, delivery: delivery, bootstrap: bootstrap) { message in
            origin(of: message).map { ($0, "") }
        }
    }

    /// Outcome events: their ids, and the SHA-256 (hex) of each one's bytes.
    static func outcomes(delivery: DeliveryLedger, bootstrap: @escaping @Sendable () -> String) -> TopicWatch {
        TopicWatch(topic: ChaosKafka.outcomeTopic, delivery: delivery, bootstrap: bootstrap, read: outcome(of:))
    }

    static func outcome(of message: KafkaMessage) -> (key: String, value: String)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any], let id = object["id"] as? String else { return nil }
        return (id, sha256(message.value).map { String(format: "%02x", $0) }.joined())
    }

    /// What was read from the current broker, by key.
    var records: [String: String] { lock.lock(); defer { lock.unlock() }; return read }

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
                consumer = topicReader(topic, bootstrap: bootstrap())
                if consumer == nil {
                    Thread.sleep(forTimeInterval: 0.5)
                    continue
                }
            }
            guard let message = try? consumer?.poll(timeoutMilliseconds: 200), let record = extract(message) else { continue }
            lock.lock()
            if delivery.epoch == epoch { read[record.key] = record.value }
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
