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
        // Boxed, so that a body whose value is itself an optional nil still commits.
        try transaction(opening: []) { _ in Committing(value: try body(self)) }!.value
    }

    private struct Committing<T> { let value: T }

    /// BEGIN and `opening` in one round trip (`pipeline`), then `body` with
    /// their results, then COMMIT when `body` returns a value, ROLLBACK when
    /// it returns nil. For a transaction whose later statements are built
    /// from its first ones' answers: `body` sends them (another `pipeline`)
    /// without a round trip of its own for BEGIN.
    ///
    /// A failing statement, or an error from `body`, rolls the transaction
    /// back and is thrown; a COMMIT that fails is thrown as in `transaction`.
    public func transaction<T>(opening statements: [PostgresStatement], _ body: ([PostgresResult]) throws -> T?) throws -> T? {
        let status = transactionStatus
        guard status != PQTRANS_INTRANS && status != PQTRANS_INERROR else {
            throw PostgresError.client("a transaction inside an open transaction; nesting is not supported", sqlState: "25001")
        }
        let value: T?
        do {
            value = try body(Array(try pipeline([PostgresStatement("BEGIN")] + statements).dropFirst()))
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        guard let value else {
            try execute("ROLLBACK")
            return nil
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
