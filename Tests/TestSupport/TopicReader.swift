import Foundation
import Kafka

/// What a test sees the product produce: a topic read from its start by a
/// consumer group of its own, which no other reader shares.
public enum TopicReader {
    /// The messages on `topic`, until `expected` came or `seconds` passed
    /// (a bound for a missing message, not a pace).
    public static func read(_ topic: String, bootstrap: String, expected: Int, seconds: TimeInterval = 30) throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(properties: [
            "bootstrap.servers": bootstrap, "group.id": "test-reader-\(UUID().uuidString)", "auto.offset.reset": "earliest",
            "session.timeout.ms": "6000",
        ], listener: NoStoredOffsets())
        defer { consumer.close() }
        try consumer.subscribe([topic])
        var messages: [KafkaMessage] = []
        let deadline = Date().addingTimeInterval(seconds)
        while messages.count < expected && Date() < deadline {
            if let message = try consumer.poll(timeoutMilliseconds: 200) { messages.append(message) }
        }
        return messages
    }
}

/// A consumer that starts each assigned partition where the group's reset
/// policy says: no stored positions of its own.
public final class NoStoredOffsets: RebalanceListener, @unchecked Sendable {
    public init() {}
    public func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] { [:] }
    public func partitionsRevoked(_ partitions: [TopicPartition]) {}
}
