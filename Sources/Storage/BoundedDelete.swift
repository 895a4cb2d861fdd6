import Postgres

extension PostgresStatement {
    /// Deletes at most `$2` rows of `table` matching `condition` on `$1`,
    /// named by their `key` columns: PostgreSQL has no `DELETE … LIMIT`, and a
    /// bounded statement keeps each purge or erasure step's locks short.
    static func boundedDelete(from table: String, key: String, where condition: String, _ value: PostgresValue, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            DELETE FROM \(table) WHERE (\(key)) IN (SELECT \(key) FROM \(table) WHERE \(condition) LIMIT $2)
            """, [value, .int(Int64(limit))])
    }
}
