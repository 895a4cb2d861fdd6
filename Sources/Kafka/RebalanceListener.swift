/// Told about partition ownership changes of a `KafkaConsumer`, on the thread
/// that calls `poll` (or `close`).
public protocol RebalanceListener: AnyObject, Sendable {
    /// On the polling thread, when partitions are newly assigned (cooperative-sticky: only the added ones). Return the offset to start each at; a partition left out starts at its committed offset / auto.offset.reset.
    func partitionsAssigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64]
    /// On the polling thread, before partitions are taken away (also on close and on lost). Must return only when the caller has finished or abandoned its in-flight work for them.
    func partitionsRevoked(_ partitions: [TopicPartition])
}
