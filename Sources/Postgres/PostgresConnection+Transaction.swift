import CLibPQ

extension PostgresConnection {
    /// Runs `body` between BEGIN and COMMIT; on any error from `body` it rolls
    /// back and rethrows that error (a failing ROLLBACK, e.g. because the
    /// connection died, is ignored: the server discards the transaction anyway).
    ///
    /// If a statement inside failed and `body` swallowed the error, PostgreSQL
    /// answers COMMIT with ROLLBACK; that is thrown as SQLSTATE 25P02, never
    /// reported as success.
    ///
    /// A COMMIT that fails with a *connection* error has an unknown outcome: the
    /// transaction may or may not have committed. The error is transient, so
    /// retried work must be idempotent (unique keys, ON CONFLICT).
    ///
    /// Not nestable: calling it inside an open transaction throws (25001).
    @discardableResult
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let status = transactionStatus
        guard status != PQTRANS_INTRANS && status != PQTRANS_INERROR else {
            throw PostgresError.client("transaction() inside an open transaction; nesting is not supported", sqlState: "25001")
        }
        try execute("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        try commit()
        return value
    }

    /// COMMIT, treating the server's "ROLLBACK" answer (the transaction had failed) as an error.
    func commit() throws(PostgresError) {
        let result = try execute("COMMIT")
        if result.commandTag == "ROLLBACK" {
            throw PostgresError(kind: .server, sqlState: "25P02",
                                message: "the transaction was rolled back at COMMIT because a statement in it had failed")
        }
    }

    func rollbackIgnoringErrors() {
        guard isConnected else { return }
        _ = try? execute("ROLLBACK")
    }
}
