import CLibPQ

extension PostgresConnection {
    /// Runs `statements` in order in one round trip: libpq's pipeline mode
    /// sends them back to back, then one sync, and reads their results as they
    /// come. A batch write that is a handful of statements then waits for the
    /// server once instead of once per statement, which on a loaded machine is
    /// a thread wake-up on each side per statement saved.
    ///
    /// The first statement that fails is thrown; the server skips the ones
    /// after it up to the sync. Inside a transaction block (a `BEGIN` among or
    /// before the statements) the transaction is then aborted and needs a
    /// `ROLLBACK`; outside one, the statements run as one implicit transaction,
    /// which a failure rolls back whole.
    ///
    /// Statements with parameters go as named statements, each prepared in
    /// the same round trip on its first use in the session
    /// (`PreparedStatementCache`).
    ///
    /// Every parameter list is checked before anything is sent, so a client
    /// error (too many parameters) leaves the session untouched. Blocking sends
    /// cannot deadlock on a full socket: libpq reads the server's answers while
    /// it waits to write.
    public func pipeline(_ statements: [PostgresStatement]) throws(PostgresError) -> [PostgresResult] {
        guard !statements.isEmpty else { return [] }
        for statement in statements where statement.sql.utf8.contains(0) { throw .client("SQL text contains U+0000") }
        var buffers: [ParameterBuffer] = []
        buffers.reserveCapacity(statements.count)
        for statement in statements { buffers.append(try statement.parameterBuffer()) }

        return try exclusive { () throws(PostgresError) -> [PostgresResult] in
            guard let handle else { throw PostgresError.closed }
            guard PQenterPipelineMode(handle) == 1 else { throw connectionError(on: handle) }
            var commands: [PipelinedCommand] = []
            commands.reserveCapacity(statements.count)
            var sent = 0
            for (statement, buffer) in zip(statements, buffers) {
                guard sendPipelined(statement.sql, buffer, on: handle, commands: &commands) else { break }
                sent += 1
            }
            var failure: PostgresError? = sent < statements.count ? connectionError(on: handle) : nil
            guard PQpipelineSync(handle) == 1 else {
                let error = failure ?? connectionError(on: handle)
                _ = PQexitPipelineMode(handle)
                statementCache.settle(after: error)
                throw error
            }
            var results: [PostgresResult] = []
            results.reserveCapacity(sent)
            // Each command's results end with a NULL; the sync's own result ends
            // the pipeline. Two NULLs in a row mean the answers stopped coming.
            var command = 0
            var previousWasEnd = false
            reading: while true {
                guard let result = PQgetResult(handle) else {
                    if previousWasEnd || PQstatus(handle) == CONNECTION_BAD {
                        failure = failure ?? connectionError(on: handle)
                        break reading
                    }
                    previousWasEnd = true
                    command += 1
                    continue
                }
                previousWasEnd = false
                defer { PQclear(result) }
                switch PQresultStatus(result) {
                case PGRES_PIPELINE_SYNC:
                    break reading
                case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                    if command < commands.count, case .prepare(let key) = commands[command] {
                        statementCache.confirm(key)
                    } else {
                        results.append(PostgresResult(result))
                    }
                case PGRES_PIPELINE_ABORTED:
                    // Skipped because an earlier statement failed; that failure is the one reported.
                    failure = failure ?? .client("a pipelined statement was skipped after an earlier failure", sqlState: "25P02")
                default:
                    failure = failure ?? error(from: result, on: handle)
                }
            }
            _ = PQexitPipelineMode(handle)
            statementCache.settle(after: failure)
            if let failure { throw failure }
            return results
        }
    }
}
