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

    /// BEGIN and `statements` in one round trip (`pipeline`), then COMMIT if
    /// `accept` approves their results, else ROLLBACK: for a transaction whose
    /// statements do not need each other's results, but whose outcome does
    /// (say, every insert must have inserted all its rows).
    ///
    /// Returns the results when committed, nil when `accept` declined. A
    /// failing statement rolls the transaction back and is thrown; a COMMIT that
    /// fails is thrown as in `transaction`.
    public func pipelinedTransaction(_ statements: [PostgresStatement], commitIf accept: ([PostgresResult]) -> Bool) throws(PostgresError) -> [PostgresResult]? {
        let status = transactionStatus
        guard status != PQTRANS_INTRANS && status != PQTRANS_INERROR else {
            throw PostgresError.client("pipelinedTransaction() inside an open transaction; nesting is not supported", sqlState: "25001")
        }
        let results: [PostgresResult]
        do {
            results = Array(try pipeline([PostgresStatement("BEGIN")] + statements).dropFirst())
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        guard accept(results) else {
            try execute("ROLLBACK")
            return nil
        }
        try commit()
        return results
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
