import Foundation

/// The parts of librdkafka's statistics JSON (STATISTICS.md) the worker
/// reports: per-partition consumer lag.
public struct KafkaStatistics: Sendable {
    /// Messages between the partition's high watermark (`hi_offset`; `ls_offset`
    /// under read_committed) and the consumer's position, per partition this
    /// client fetches. librdkafka's `consumer_lag` measures to the committed
    /// offset; before a first commit (it is -1 then) the lag is measured to
    /// `app_offset`, the next offset the application will see. Partitions with
    /// neither, and the internal partition -1, are left out.
    ///
    /// Watermarks are as fresh as the last fetch response: approximate, and the
    /// mock cluster's can be coarser still (tests only check that the values
    /// are sane, not exact).
    public let consumerLag: [TopicPartition: Int64]

    public init?(json bytes: UnsafeRawBufferPointer) {
        guard let root = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        var lag: [TopicPartition: Int64] = [:]
        let topics = root["topics"] as? [String: Any] ?? [:]
        for (topic, value) in topics {
            guard let partitions = (value as? [String: Any])?["partitions"] as? [String: Any] else { continue }
            for (key, value) in partitions {
                guard let number = Int32(key), number >= 0, let partition = value as? [String: Any] else { continue }
                func int(_ name: String) -> Int64? { (partition[name] as? NSNumber)?.int64Value }
                // Only partitions this client consumes.
                if let desired = partition["desired"] as? Bool, !desired { continue }
                if let committedLag = int("consumer_lag"), committedLag >= 0 {
                    lag[TopicPartition(topic, number)] = committedLag
                } else if let high = int("hi_offset"), let position = int("app_offset"), high >= 0, position >= 0 {
                    lag[TopicPartition(topic, number)] = max(0, high - position)
                }
            }
        }
        consumerLag = lag
    }

    public init(json: String) {
        var text = json
        self = text.withUTF8 { KafkaStatistics(json: UnsafeRawBufferPointer($0)) } ?? KafkaStatistics(consumerLag: [:])
    }

    init(consumerLag: [TopicPartition: Int64]) {
        self.consumerLag = consumerLag
    }
}
