import Postgres

/// `element_groups`: the names and retention decisions of disclosed
/// elements, never their values; one row per event, namespace and decision,
/// listing its elements (the view `elements` has a row per element).
public enum ElementGroupsTable {
    /// The row layout writers follow (`RetentionWriter.elementGroupRows`).
    public static let columns: [PostgresColumn] = [
        .init("event_id", "text"), .init("namespace", "text"), .init("elements", "text[]"), .init("requested", "boolean"),
        .init("retention_intent", "text"), .init("retention_days", "integer"), .init("retention_source", "text"),
        .init("retention_capped", "boolean"), .init("retain_until", "timestamptz"),
    ]

    /// Rows of new results only, one entry per element and event: that, not a
    /// key, keeps them unique (migration 7 dropped the key).
    public static func insert(_ rows: [[PostgresValue]]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(into: "element_groups", columns: columns, rows: rows)
    }
}
