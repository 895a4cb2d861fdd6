import Foundation
import Postgres

/// `outbox`: outcome events waiting for the outcome topic. A row is written
/// in the batch transaction, claimed by the worker that wrote it, and
/// deleted once the broker acknowledged it; rows whose claim ran out are
/// claimed again by any worker (`claimExpired`), so nothing stays unpublished.
public enum OutboxTable {
    static let columns: [PostgresColumn] = [
        .init("id", "text"), .init("event_id", "text"), .init("kafka_key", "bytea"), .init("payload", "text"),
        .init("claimed_by", "text"), .init("claimed_until", "timestamptz"), .init("has_claims", "boolean"),
    ]

    /// An outcome row: `id` is the outcome event's id, `eventID` the request's (its results row).
    public struct Row: Sendable {
        public let id: String
        public let eventID: String
        public let key: [UInt8]?
        public let payload: String
        /// The payload carries sealed claims (erasure and purge strip them).
        public let hasClaims: Bool

        public init(id: String, eventID: String, key: [UInt8]?, payload: String, hasClaims: Bool) {
            self.id = id
            self.eventID = eventID
            self.key = key
            self.payload = payload
            self.hasClaims = hasClaims
        }
    }

    /// The rows, claimed by `worker` until `claimUntil`. An id already there
    /// fails the statement: the writer inserts outbox rows only for results
    /// its own transaction has just inserted (the results key decides
    /// redeliveries), and an outcome id follows from its request's id, so
    /// none can be there. Without `ON CONFLICT` PostgreSQL skips a probe of
    /// the key and a speculative insertion per row.
    public static func insert(_ rows: [Row], claimedBy worker: String, until claimUntil: Date) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "outbox", columns: columns,
            rows: rows.map { row in
                [.text(row.id), .text(row.eventID), row.key.map(PostgresValue.bytes) ?? .null, .text(row.payload),
                 .text(worker), .timestamp(claimUntil), .bool(row.hasClaims)]
            })
    }

    /// Rows no worker has claimed yet, each id once: an id already there is
    /// the same event found again (`StatusChangedEvent` ids follow from what
    /// they report), left as it is. The publisher's sweep (`claimExpired`) sends them.
    public static func insertUnclaimed(_ rows: [Row]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "outbox", columns: columns,
            rows: rows.map { row in
                [.text(row.id), .text(row.eventID), row.key.map(PostgresValue.bytes) ?? .null, .text(row.payload), .null, .null, .bool(row.hasClaims)]
            },
            suffix: "ON CONFLICT (id) DO NOTHING")
    }

    /// Delivered outcomes leave the outbox.
    public static func deleteDelivered(ids: [String]) -> PostgresStatement {
        PostgresStatement("DELETE FROM outbox WHERE id = ANY($1::text[])", [.textArray(ids)])
    }

    /// Unpublished rows (column `count`).
    public static let countUnpublished = PostgresStatement("SELECT count(*) AS count FROM outbox WHERE published_at IS NULL")

    /// Claims up to 1,000 unpublished rows whose claim ran out (oldest first),
    /// for `worker` and `seconds`, and returns them (id, event_id, kafka_key,
    /// payload). Workers sweeping together skip each other's rows.
    public static func claimExpired(by worker: String, forSeconds seconds: Double) -> PostgresStatement {
        PostgresStatement("""
            UPDATE outbox SET claimed_by = $1, claimed_until = now() + make_interval(secs => $2)
            WHERE id IN (
                SELECT id FROM outbox
                WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                ORDER BY created_at LIMIT 1000 FOR UPDATE SKIP LOCKED)
            RETURNING id, event_id, kafka_key, payload
            """, [.text(worker), .double(seconds)])
    }

    /// Removes the sealed claims and the age answers from up to `limit`
    /// outcomes of one request or tenant (`has_claims` marks rows with either).
    public static func stripClaims(matching scope: ErasureScope, limit: Int) -> PostgresStatement {
        ClaimsStripping(table: "outbox", column: "payload", key: ["id"], holdsClaims: "has_claims", alsoSet: "has_claims = false",
                        requestRows: "event_id = $1", tenantRows: "event_id IN (SELECT event_id FROM results WHERE tenant = $1)")
            .statement(scope, limit: limit)
    }

    /// Up to `limit` rows that earlier versions marked published and kept.
    public static func deletePublished(limit: Int) -> PostgresStatement {
        PostgresStatement("DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE published_at IS NOT NULL LIMIT $1)",
                          [.int(Int64(limit))])
    }
}
