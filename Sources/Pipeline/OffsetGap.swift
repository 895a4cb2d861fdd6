import Kafka
import Postgres
import Storage

/// Offsets of a partition that this consumer group will never read, found when
/// a record arrives at another offset than the next one expected.
///
/// When the broker no longer has a partition's position (retention deleted the
/// records before the group reached them, or the topic was recreated or
/// truncated below it), librdkafka moves the fetch to the log start
/// (`auto.offset.reset`) and says so only in a log line. The worker sees it as
/// a jump in the offsets it receives, and tells it from the gaps that Kafka
/// leaves on purpose (transaction markers, compaction) by the partition's
/// watermarks: a jump past offsets below the log start is a deletion; a jump
/// back from past the log end is a truncation.
public struct OffsetGap: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// The records from `from` up to `to` were deleted before they were read.
        case deleted
        /// The log now ends before `from`: reading starts again at `to`, the log
        /// start. What the old log held past it is unknown.
        case truncated
    }

    public let partition: TopicPartition
    public let kind: Kind
    /// The next offset the group had to read (its stored or reached position).
    public let from: Int64
    /// The offset reading goes on at.
    public let to: Int64

    /// Offsets passed over without being read (deleted gaps); nil for a
    /// truncation, where nothing is known of what was lost.
    public var skippedOffsets: Int64? { kind == .deleted ? to - from : nil }

    /// The gap, if receiving `received` when `expected` was next means one.
    /// `watermarks`: the partition's low and high offsets from the fetch that
    /// delivered the record.
    public static func detect(_ partition: TopicPartition, expected: Int64, received: Int64,
                              watermarks: (low: Int64, high: Int64)?) -> OffsetGap? {
        guard let watermarks else { return nil }
        if received > expected {
            // Below the log start: deleted. At or above it: markers or compaction.
            guard watermarks.low > expected else { return nil }
            return OffsetGap(partition: partition, kind: .deleted, from: expected, to: received)
        }
        if received < expected {
            // A log that ends before the position was cut or made anew, and
            // librdkafka went back to its start; otherwise this is a record
            // received twice, which the tracker drops. (The log start is asked
            // for as well because tansu reports high watermarks too low.)
            guard watermarks.high < expected, watermarks.low < 0 || received <= watermarks.low else { return nil }
            return OffsetGap(partition: partition, kind: .truncated, from: expected, to: received)
        }
        return nil
    }
}

/// What a worker does at a gap (`kafka.offsetGapPolicy`).
public enum OffsetGapPolicy: String, Sendable, CaseIterable {
    /// Record the gap and read on from where the broker's log goes on.
    case skip
    /// Record the gap and stop reading the partition: the worker turns not
    /// ready until it is restarted (with `skip`, or after the records were
    /// restored to the topic).
    case stop
}

extension ResultStore {
    /// Writes the gap to `consumer_gaps` (once per partition and start), and
    /// for a truncation that is skipped moves the stored position back to where
    /// reading goes on: positions otherwise only move forward, and one left past
    /// the log end would send every later owner to the same jump.
    static func recordGap(_ gap: OffsetGap, policy: OffsetGapPolicy, group: String, workerID: String, on connection: PostgresConnection) throws {
        try connection.transaction { connection in
            try connection.execute(ConsumerGapsTable.insert(
                group: group, topic: gap.partition.topic, partition: gap.partition.partition, from: gap.from, to: gap.to,
                kind: gap.kind.rawValue, skippedOffsets: gap.skippedOffsets, policy: policy.rawValue, workerID: workerID))
            if gap.kind == .truncated && policy == .skip {
                try connection.execute(ConsumerPositionsTable.moveBack(
                    group: group, topic: gap.partition.topic, partition: gap.partition.partition, to: gap.to))
            }
        }
    }
}
