import Foundation
import Postgres

/// `element_values`: the sealed values of `mayStore` elements, partitioned
/// by `retain_until` (`ValuePartitions`). Every statement that deletes or
/// rewrites rows here is bounded by a `LIMIT`, so a large purge, erasure or
/// rotation never holds locks the write path waits for.
public enum ElementValuesTable: RetainedRows {
    public static let tableName = "element_values"
    public static let keyColumns = "event_id, namespace, element, retain_until"

    /// The table's columns, in the order `parameters(_:)` gives a row's values.
    package static let columns: [PostgresColumn] = [
        .init("event_id", "text"), .init("tenant", "text"), .init("namespace", "text"), .init("element", "text"), .init("key_id", "text"),
        .init("nonce", "bytea"), .init("ciphertext", "bytea"), .init("retain_until", "timestamptz"), .init("stored_at", "timestamptz"),
    ]

    /// One sealed value (`RetentionWriter.valueRows`), under the names as stored.
    public struct Row: Sendable, Equatable {
        public var eventID: String
        public var tenant: String
        public var namespace: String
        public var element: String
        /// The data key it is sealed under.
        public var keyID: String
        public var nonce: [UInt8]
        public var ciphertext: [UInt8]
        public var retainUntil: RetainUntil
        public var storedAt: Date

        public init(eventID: String, tenant: String, namespace: String, element: String, keyID: String, nonce: [UInt8], ciphertext: [UInt8],
                    retainUntil: RetainUntil, storedAt: Date) {
            self.eventID = eventID
            self.tenant = tenant
            self.namespace = namespace
            self.element = element
            self.keyID = keyID
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.retainUntil = retainUntil
            self.storedAt = storedAt
        }
    }

    /// A row's values in `columns`' order.
    package static func parameters(_ row: Row) -> [PostgresValue] {
        [.text(row.eventID), .text(row.tenant), .text(row.namespace), .text(row.element), .text(row.keyID), .bytes(row.nonce),
         .bytes(row.ciphertext), row.retainUntil.parameter, .timestamp(row.storedAt)]
    }

    /// Values of results just inserted in the same transaction, so none is
    /// there yet (as for `OutboxTable.insert`): a row already there fails the statement.
    public static func insert(_ rows: [Row]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(into: "element_values", columns: columns, rows: rows.map(parameters))
    }

    /// How long the oldest value past its `retain_until` at `now` has been
    /// overdue, in seconds (column `age`; 0 when none is).
    public static func oldestOverdue(at now: Date) -> PostgresStatement {
        PostgresStatement(
            "SELECT COALESCE(EXTRACT(EPOCH FROM ($1::timestamptz - min(retain_until)))::float8, 0) AS age FROM element_values WHERE retain_until <= $1",
            [.timestamp(now)])
    }

    /// Up to `limit` rows sealed under one of `keyIDs`, with the key of each
    /// row (`retain_until` as text, so the rewrite matches it exactly).
    public static func sealed(underAnyOf keyIDs: [String], limit: Int) -> PostgresStatement {
        PostgresStatement("""
            SELECT event_id, namespace, element, retain_until::text AS retain_until, key_id, nonce, ciphertext
            FROM element_values WHERE key_id = ANY($1::text[]) LIMIT $2
            """, [.textArray(keyIDs), .int(Int64(limit))])
    }

    /// One value, read by `sealed(underAnyOf:limit:)`, sealed again. It
    /// matches on the old key id: a row changed or purged meanwhile is left alone.
    public static func reseal(eventID: String, namespace: String, element: String, retainUntil: String, fromKey oldKeyID: String,
                              keyID: String, nonce: [UInt8], ciphertext: [UInt8]) -> PostgresStatement {
        PostgresStatement("""
            UPDATE element_values SET key_id = $1, nonce = $2, ciphertext = $3
            WHERE event_id = $4 AND namespace = $5 AND element = $6 AND retain_until = $7::timestamptz AND key_id = $8
            """, [.text(keyID), .bytes(nonce), .bytes(ciphertext), .text(eventID), .text(namespace), .text(element),
                  .text(retainUntil), .text(oldKeyID)])
    }

    /// Rows under a key id not among `keyIDs` (column `count`).
    public static func countSealed(underNoneOf keyIDs: [String]) -> PostgresStatement {
        PostgresStatement("SELECT count(*) AS count FROM element_values WHERE NOT (key_id = ANY($1::text[]))", [.textArray(keyIDs)])
    }
}
