/// A statement with its parameters, built before it runs: what `pipeline` sends
/// several of in one round trip, and what `execute(_:)` runs alone.
public struct PostgresStatement: Sendable {
    public let sql: String
    /// The parameters given to `init`. A statement from `insertColumns` has
    /// none here: its array parameters are encoded as it is built (mostly in
    /// binary format, which no `PostgresValue` spells), so that its errors
    /// come from building it, as before.
    public let parameters: [PostgresValue]
    /// `insertColumns`'s parameters, ready to send.
    private let encoded: ParameterBuffer?

    public init(_ sql: String, _ parameters: [PostgresValue] = []) {
        self.sql = sql
        self.parameters = parameters
        encoded = nil
    }

    /// The statement `PostgresConnection.insertColumns` runs (see there).
    public static func insertColumns(into table: String, columns: [PostgresColumn], rows: [[PostgresValue]], suffix: String = "") throws(PostgresError) -> PostgresStatement {
        let (sql, parameters) = try PostgresConnection.unnestInsert(into: table, columns: columns, rows: rows, suffix: suffix)
        return PostgresStatement(sql: sql, encoded: parameters)
    }

    private init(sql: String, encoded: ParameterBuffer) {
        self.sql = sql
        parameters = []
        self.encoded = encoded
    }

    /// The parameters as libpq takes them.
    func parameterBuffer() throws(PostgresError) -> ParameterBuffer {
        if let encoded { return encoded }
        return try ParameterBuffer(parameters)
    }
}

extension PostgresConnection {
    @discardableResult
    public func execute(_ statement: PostgresStatement) throws(PostgresError) -> PostgresResult {
        try execute(statement.sql, try statement.parameterBuffer())
    }
}
