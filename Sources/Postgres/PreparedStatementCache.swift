import CLibPQ

/// The named statements one session has prepared, so that a statement the
/// worker runs for every batch is parsed, analysed and (once the server
/// settles on a generic plan, after five executions) planned once per session
/// instead of once per batch: sent unnamed, that work is a large share of the
/// persister's backend CPU at small batches (section 6 of `make bench`
/// compares the two).
///
/// The key is the SQL text with the parameter type OIDs as sent: the server
/// fixes a statement's parameter types when it prepares it, and the same
/// `insertColumns` text goes with binary arrays or with text literals (OID 0)
/// depending on the values, so each type vector needs its own statement.
///
/// Only statements with parameters are cached: the code builds those from
/// constant text (values travel as parameters), so they recur; a statement
/// without any is BEGIN, COMMIT, DDL or a one-off query, cheap to parse or
/// not worth a server-side entry.
///
/// Bounded: past `capacity` entries, new statements go unnamed and nothing
/// is evicted. A worker's connections use about a dozen statements each, so
/// the bound is reached only by text that varies (a caller interpolating
/// names), where evicting with DEALLOCATE would cost a round trip for each
/// statement that is then likely not to come back anyway.
///
/// Names are never reused within a connection, not even after `clear()`:
/// a statement the server still holds under an old name (the cache cleared
/// after SQLSTATE 26000 on another one) can then never collide (42P05).
struct PreparedStatementCache {
    struct Key: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// How to send one statement.
    enum Plan {
        /// Parsed and planned on every execution, as `PQexecParams` does.
        case unnamed
        /// Execute `name`, prepared earlier on this session (or earlier in the same pipeline).
        case prepared(name: String)
        /// Prepare it as `name` first, then `confirm` once the server said the Prepare succeeded.
        case prepare(Key, name: String)
    }

    static let capacity = 64

    /// False behind a pooler that hands each transaction a different server session (PgBouncer's transaction mode).
    let enabled: Bool
    private var names: [Key: String] = [:]
    /// Prepares sent but not yet answered: a later use in the same pipeline may already execute them.
    private var pending: [Key: String] = [:]
    private var lastNumber = 0

    init(enabled: Bool) {
        self.enabled = enabled
    }

    var count: Int { names.count }

    mutating func plan(sql: String, types: [Oid]) -> Plan {
        guard enabled, !types.isEmpty else { return .unnamed }
        let key = Key(sql: sql, types: types)
        if let name = names[key] ?? pending[key] { return .prepared(name: name) }
        guard names.count + pending.count < Self.capacity else { return .unnamed }
        lastNumber += 1
        let name = "vd_\(lastNumber)"
        pending[key] = name
        return .prepare(key, name: name)
    }

    /// The server prepared `key`: from now on it is executed by name.
    mutating func confirm(_ key: Key) {
        if let name = pending.removeValue(forKey: key) { names[key] = name }
    }

    /// Ends a round of sends: a Prepare that was not confirmed failed or was
    /// skipped after an earlier failure (a pipeline's statements after the
    /// first error never run), so it must be prepared again on its next use.
    /// A missing statement (26000) means the server's set is not what the
    /// cache says, whatever dropped it (DEALLOCATE ALL, DISCARD ALL, a
    /// pooler that switched sessions): every entry is forgotten, so the
    /// caller's retry prepares afresh.
    mutating func settle(after failure: PostgresError?) {
        pending.removeAll()
        if failure?.sqlState == "26000" { names.removeAll() }
    }

    /// The session is new (reset) or gone (closed): it holds no statements.
    mutating func clear() {
        names.removeAll()
        pending.removeAll()
    }
}
