import Postgres

/// `consumer_gaps`: offsets a group passed over without reading them, the
/// durable trace of records lost to retention or a recreated topic.
public enum ConsumerGapsTable {
    /// Records a gap once per group, partition, start and kind.
    /// `kind` and `policy` are the values the table's checks allow.
    public static func insert(group: String, topic: String, partition: Int32, from: Int64, to: Int64, kind: String,
                              skippedOffsets: Int64?, policy: String, workerID: String) -> PostgresStatement {
        PostgresStatement("""
            INSERT INTO consumer_gaps (consumer_group, topic, partition, from_offset, to_offset, kind, skipped_offsets, policy, worker_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (consumer_group, topic, partition, from_offset, kind) DO NOTHING
            """, [.text(group), .text(topic), .int(Int64(partition)), .int(from), .int(to), .text(kind),
                  skippedOffsets.map(PostgresValue.int) ?? .null, .text(policy), .text(workerID)])
    }
}
