import Foundation
import Postgres

/// `status_lists`: each revocation list as a worker last fetched it (the
/// signed token's or CRL's bytes, its validators, when it was fetched and
/// when it expires), shared by every worker. A reader verifies the list
/// again; the table holds what was fetched, not a verdict.
public enum StatusListsTable {
    public struct Row: Sendable, Equatable {
        public var kind: StatusReferencesTable.Kind
        public var uri: String
        public var token: [UInt8]
        public var etag: String?
        public var lastModified: String?
        public var fetchedAt: Date
        public var expiresAt: Date

        public init(kind: StatusReferencesTable.Kind, uri: String, token: [UInt8], etag: String?, lastModified: String?, fetchedAt: Date, expiresAt: Date) {
            self.kind = kind
            self.uri = uri
            self.token = token
            self.etag = etag
            self.lastModified = lastModified
            self.fetchedAt = fetchedAt
            self.expiresAt = expiresAt
        }
    }

    /// The row, or a newer fetch of the same list left as it is.
    public static func upsert(_ row: Row) -> PostgresStatement {
        PostgresStatement("""
            INSERT INTO status_lists (list_kind, list_uri, token, etag, last_modified, fetched_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (list_kind, list_uri) DO UPDATE SET token = EXCLUDED.token, etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified,
                fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at
            WHERE status_lists.fetched_at <= EXCLUDED.fetched_at
            """, [.text(row.kind.rawValue), .text(PostgresValue.storable(row.uri)), .bytes(row.token), row.etag.map { .text(PostgresValue.storable($0)) } ?? .null,
                  row.lastModified.map { .text(PostgresValue.storable($0)) } ?? .null, .timestamp(row.fetchedAt), .timestamp(row.expiresAt)])
    }

    /// One list (columns `token`, `etag`, `last_modified`, `fetched_at`, `expires_at`), if any worker fetched it.
    public static func find(_ kind: StatusReferencesTable.Kind, uri: String) -> PostgresStatement {
        PostgresStatement("SELECT token, etag, last_modified, fetched_at, expires_at FROM status_lists WHERE list_kind = $1 AND list_uri = $2",
                          [.text(kind.rawValue), .text(uri)])
    }

    /// Up to `limit` lists expired before `now` (a list is never used after its `exp`).
    public static func deleteExpired(at now: Date, limit: Int) -> PostgresStatement {
        .boundedDelete(from: "status_lists", key: "list_kind, list_uri", where: "expires_at <= $1", .timestamp(now), limit: limit)
    }
}
