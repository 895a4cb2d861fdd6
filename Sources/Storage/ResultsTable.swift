import Postgres

/// `results`: one row per event id, its verdict and the non-personal facts
/// analytics count. Rows are inserted once and never deleted.
public enum ResultsTable {
    /// The row layout writers follow; names and types as the migrations
    /// declare them (they become the casts of the array parameters).
    public static let columns: [PostgresColumn] = [
        .init("event_id", "text"), .init("tenant", "text"), .init("flow", "text"), .init("verdict", "text"), .init("reason_codes", "text[]"),
        .init("doc_type", "text"), .init("issuer_subject", "text"), .init("issuer_country", "text"), .init("mso_signed", "timestamptz"),
        .init("mso_valid_from", "timestamptz"), .init("mso_valid_until", "timestamptz"), .init("event_time", "timestamptz"),
        .init("received_at", "timestamptz"), .init("verified_at", "timestamptz"), .init("processing_seconds", "double precision"),
        .init("source_topic", "text"), .init("source_partition", "integer"), .init("source_offset", "bigint"),
        .init("assurance", "text"), .init("test_kind", "text"), .init("element_groups", "json"),
        .init("device_auth", "text"), .init("device_reader", "text"),
    ]

    /// Inserts the rows whose event id is not stored yet and returns those ids
    /// (column `event_id`): an id already there is a redelivery.
    public static func insertNew(_ rows: [[PostgresValue]]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(into: "results", columns: columns, rows: rows, suffix: "ON CONFLICT (event_id) DO NOTHING RETURNING event_id")
    }

    /// A result inserted in this transaction as verified turned out to be a
    /// replay: its verdict and reasons become the replay's.
    public static func recordReplay(eventID: String, verdict: String, reasonCodes: [String]) -> PostgresStatement {
        PostgresStatement("UPDATE results SET verdict = $2, reason_codes = $3::text[] WHERE event_id = $1",
                          [.text(eventID), .text(verdict), .textArray(reasonCodes)])
    }

    /// How many results match a request (`event_id`) or a tenant: erasure keeps them and says so.
    public static func count(matching scope: ErasureScope) -> PostgresStatement {
        PostgresStatement("SELECT count(*) AS count FROM results WHERE \(scope.column) = $1", [.text(scope.value)])
    }
}

/// Whose data a right-to-erasure request removes: one request's or a whole tenant's.
public enum ErasureScope: Sendable, Equatable {
    case request(eventID: String)
    case tenant(String)

    var column: String {
        switch self {
        case .request: "event_id"
        case .tenant: "tenant"
        }
    }

    var value: String {
        switch self {
        case .request(let eventID): eventID
        case .tenant(let tenant): tenant
        }
    }
}
