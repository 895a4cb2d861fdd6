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
        try refuseNesting()
        try execute("BEGIN")
        let value = try rollingBackOnError { try body(self) }
        try commit()
        return value
    }

    /// A transaction in two round trips (`pipeline`): BEGIN and `opening`,
    /// then the statements `closing` builds from their answers, with COMMIT.
    /// For a write whose later statements depend on what the first ones found
    /// (say, which rows an `INSERT … ON CONFLICT DO NOTHING RETURNING` inserted).
    ///
    /// A failing statement, or an error from `closing`, rolls the transaction
    /// back and is thrown; a COMMIT the server answers with ROLLBACK is thrown
    /// as in `transaction(_:)`, and so is one that fails with a connection error
    /// (its outcome unknown). Returns `closing`'s value.
    public func transaction<T>(opening: [PostgresStatement],
                               closing: ([PostgresResult]) throws -> (statements: [PostgresStatement], value: T)) throws -> T {
        try refuseNesting()
        return try rollingBackOnError {
            let opened = Array(try pipeline([PostgresStatement("BEGIN")] + opening).dropFirst())
            let (statements, value) = try closing(opened)
            let closed = try pipeline(statements + [PostgresStatement("COMMIT")])
            if closed.last?.commandTag == "ROLLBACK" { throw Self.rolledBackAtCommit }
            return value
        }
    }

    private func refuseNesting() throws(PostgresError) {
        let status = transactionStatus
        guard status != PQTRANS_INTRANS && status != PQTRANS_INERROR else {
            throw PostgresError.client("a transaction inside an open transaction; nesting is not supported", sqlState: "25001")
        }
    }

    private func rollingBackOnError<T>(_ body: () throws -> T) rethrows -> T {
        do {
            return try body()
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
    }

    private static let rolledBackAtCommit = PostgresError(
        kind: .server, sqlState: "25P02", message: "the transaction was rolled back at COMMIT because a statement in it had failed")

    /// COMMIT, treating the server's "ROLLBACK" answer (the transaction had failed) as an error.
    func commit() throws(PostgresError) {
        if try execute("COMMIT").commandTag == "ROLLBACK" { throw Self.rolledBackAtCommit }
    }

    func rollbackIgnoringErrors() {
        guard isConnected else { return }
        _ = try? execute("ROLLBACK")
    }
}
