import Foundation
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

/// A table of what is kept about a person only while a result's retention
/// allows (`retain_until`), and erased with a request or tenant: the
/// element values, and the revocation references kept with them. Purge and
/// erasure delete from each the same way.
public protocol RetainedRows {
    static var tableName: String { get }
    /// The columns that name one row.
    static var keyColumns: String { get }
}

extension RetainedRows {
    /// Up to `limit` rows past their `retain_until` at `now`.
    public static func deleteExpired(at now: Date, limit: Int) -> PostgresStatement {
        .boundedDelete(from: tableName, key: keyColumns, where: "retain_until <= $1", .timestamp(now), limit: limit)
    }

    /// Up to `limit` rows of one request or tenant.
    public static func delete(matching scope: ErasureScope, limit: Int) -> PostgresStatement {
        .boundedDelete(from: tableName, key: keyColumns, where: "\(scope.column) = $1", .text(scope.value), limit: limit)
    }
}
