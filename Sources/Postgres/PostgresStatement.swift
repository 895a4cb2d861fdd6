/// A statement with its parameters, built before it runs: what `pipeline` sends
/// several of in one round trip, and what `execute(_:)` runs alone.
public struct PostgresStatement: Sendable {
    public let sql: String
    public let parameters: [PostgresValue]

    public init(_ sql: String, _ parameters: [PostgresValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }

    /// The statement `PostgresConnection.insertColumns` runs (see there).
    public static func insertColumns(into table: String, columns: [PostgresColumn], rows: [[PostgresValue]], suffix: String = "") throws(PostgresError) -> PostgresStatement {
        let (sql, parameters) = try PostgresConnection.unnestInsert(into: table, columns: columns, rows: rows, suffix: suffix)
        return PostgresStatement(sql, parameters)
    }
}

extension PostgresConnection {
    @discardableResult
    public func execute(_ statement: PostgresStatement) throws(PostgresError) -> PostgresResult {
        try execute(statement.sql, statement.parameters)
    }
}
