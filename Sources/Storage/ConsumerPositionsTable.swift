import Postgres

/// `consumer_positions`: the next offset to read per group and partition,
/// written in the transaction of the results it covers. This, not Kafka's
/// committed offset, is where a (re)assigned partition starts.
public enum ConsumerPositionsTable {
    /// A partition's next offset to read.
    public typealias Position = (topic: String, partition: Int32, nextOffset: Int64)

    static let columns: [PostgresColumn] = [
        .init("consumer_group", "text"), .init("topic", "text"), .init("partition", "integer"), .init("next_offset", "bigint"),
    ]

    /// Positions only move forward: a position means every earlier offset is
    /// durable, so a late write from a previous owner can never skip work.
    public static func advance(group: String, to positions: [Position]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "consumer_positions", columns: columns,
            rows: positions.map { [.text(group), .text($0.topic), .int(Int64($0.partition)), .int($0.nextOffset)] },
            suffix: "ON CONFLICT (consumer_group, topic, partition) DO UPDATE SET "
                + "next_offset = GREATEST(consumer_positions.next_offset, EXCLUDED.next_offset), updated_at = now()")
    }

    /// The group's stored positions on `topics` (topic, partition, next_offset).
    public static func read(group: String, topics: [String]) -> PostgresStatement {
        PostgresStatement("SELECT topic, partition, next_offset FROM consumer_positions WHERE consumer_group = $1 AND topic = ANY($2::text[])",
                          [.text(group), .textArray(topics)])
    }

    /// The one way a position moves back: to the end of a truncated log that
    /// the group skips, so that later owners do not jump past it again.
    public static func moveBack(group: String, topic: String, partition: Int32, to offset: Int64) -> PostgresStatement {
        PostgresStatement(
            "UPDATE consumer_positions SET next_offset = $4, updated_at = now() WHERE consumer_group = $1 AND topic = $2 AND partition = $3 AND next_offset > $4",
            [.text(group), .text(topic), .int(Int64(partition)), .int(offset)])
    }
}
