extension PostgresConnection {
    /// Holds the session-level advisory lock `key` (`pg_advisory_lock`, waiting
    /// for it, bounded only by `lock_timeout`/`statement_timeout`) while `body`
    /// runs, then releases it, also when `body` throws. Meant for migrations: one
    /// worker migrates, the others wait and then find nothing to do.
    ///
    /// If the connection dies the server releases the lock with the session; an
    /// unlock failing for that reason does not hide `body`'s result.
    @discardableResult
    public func withAdvisoryLock<T>(_ key: Int64, _ body: () throws -> T) throws -> T {
        try execute("SELECT pg_advisory_lock($1)", [.int(key)])
        let value: T
        do {
            value = try body()
        } catch {
            _ = try? unlockAdvisory(key)
            throw error
        }
        do {
            try unlockAdvisory(key)
        } catch where error.kind == .connection {
            // The session, and with it the lock, is gone already.
        }
        return value
    }

    private func unlockAdvisory(_ key: Int64) throws(PostgresError) {
        let result = try execute("SELECT pg_advisory_unlock($1) AS released", [.int(key)])
        guard result.bool(0, "released") == true else {
            throw .client("advisory lock \(key) was not held by this session at unlock")
        }
    }
}
