import CRdKafka

/// One partition of one topic.
public struct TopicPartition: Hashable, Sendable, CustomStringConvertible {
    public let topic: String
    public let partition: Int32

    public init(_ topic: String, _ partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }
}

/// An owned `rd_kafka_topic_partition_list_t`, built from Swift values and
/// destroyed when this value goes out of scope. Used only inside one call, so
/// it is deliberately not Sendable.
struct TopicPartitionList: ~Copyable {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// `offset` nil leaves librdkafka's default (RD_KAFKA_OFFSET_INVALID: "use
    /// the committed offset, else auto.offset.reset").
    init(_ partitions: some Collection<TopicPartition>, offsets: [TopicPartition: Int64] = [:]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(clamping: max(partitions.count, 1)))
        for partition in partitions {
            let element = rd_kafka_topic_partition_list_add(pointer, partition.topic, partition.partition)!
            if let offset = offsets[partition] { element.pointee.offset = offset }
        }
    }

    deinit { rd_kafka_topic_partition_list_destroy(pointer) }

    static func elements(of list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [(TopicPartition, Int64, rd_kafka_resp_err_t)] {
        guard let list, let elements = list.pointee.elems else { return [] }
        return (0..<Int(list.pointee.cnt)).map { index in
            let element = elements[index]
            return (TopicPartition(String(cString: element.topic), element.partition), element.offset, element.err)
        }
    }

    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [TopicPartition] {
        elements(of: list).map(\.0)
    }
}
