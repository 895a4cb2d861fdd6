import CLibPQ

extension PostgresConnection {
    /// Runs one statement with `$1…$n` parameters (the extended protocol, so
    /// values never pass through SQL text and cannot inject). With parameters
    /// it runs as a named statement, prepared on its first use in the session
    /// (`PreparedStatementCache`). Results come back in text format. At most
    /// 65,535 parameters.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        try execute(sql, ParameterBuffer(parameters))
    }

    /// Runs several `;`-separated statements without parameters (`PQexec`, the
    /// simple protocol), e.g. a migration. Without explicit BEGIN/COMMIT the
    /// server runs them as one implicit transaction; the first error stops the
    /// script and is thrown.
    public func executeScript(_ sql: String) throws(PostgresError) {
        try Self.checkNoNUL(sql)
        _ = try exclusive { () throws(PostgresError) in
            guard let handle else { throw PostgresError.closed }
            return try consume(PQexec(handle, sql), on: handle)
        }
    }

    /// `reuse: false` for text that varies from call to call (see `executeCached`).
    func execute(_ sql: String, _ parameters: ParameterBuffer, reuse: Bool = true) throws(PostgresError) -> PostgresResult {
        try Self.checkNoNUL(sql)
        return try exclusive { () throws(PostgresError) in
            guard let handle else { throw PostgresError.closed }
            do throws(PostgresError) {
                return try consume(try executeCached(sql, parameters, reuse: reuse, on: handle), on: handle)
            } catch {
                statementCache.settle(after: error)
                throw error
            }
        }
    }

    private static func checkNoNUL(_ sql: String) throws(PostgresError) {
        // libpq takes the statement as a C string; a NUL would cut it short silently.
        if sql.utf8.contains(0) { throw .client("SQL text contains U+0000") }
    }

    /// Turns a `PGresult` into a value or an error, and frees it.
    func consume(_ result: OpaquePointer?, on handle: OpaquePointer) throws(PostgresError) -> PostgresResult {
        guard let result else {
            // NULL: out of memory, or the query could not even be sent.
            throw connectionError(on: handle)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            abandonCopy(status, on: handle)
            throw .client("COPY is not supported through execute")
        default:
            throw error(from: result, on: handle)
        }
    }

    /// The error a failed statement reports; see `PostgresError` for what is kept.
    func error(from result: OpaquePointer, on handle: OpaquePointer) -> PostgresError {
        let sqlState = veridoc_pq_sqlstate(result).map { String(cString: $0) }
        var message = veridoc_pq_message_primary(result).map { String(cString: $0) }
            ?? PostgresError.firstLine(of: PQresultErrorMessage(result).map { String(cString: $0) } ?? "")
        if sqlState?.hasPrefix("22") == true {
            message = PostgresError.redactQuoted(message)
        }
        // A dead session outranks the SQLSTATE: whatever the server said last
        // (57P01 on pg_terminate_backend, nothing on a dropped socket), the
        // remedy is the same: reconnect.
        let kind: PostgresError.Kind
        if PQstatus(handle) == CONNECTION_BAD {
            kind = .connection
        } else {
            kind = sqlState == nil ? .client : .server
        }
        return PostgresError(
            kind: kind, sqlState: sqlState, message: message,
            constraint: veridoc_pq_constraint_name(result).map { String(cString: $0) },
            table: veridoc_pq_table_name(result).map { String(cString: $0) })
    }

    func connectionError(on handle: OpaquePointer) -> PostgresError {
        let message = PostgresError.firstLine(of: String(cString: PQerrorMessage(handle)))
        return PostgresError(kind: PQstatus(handle) == CONNECTION_BAD ? .connection : .client, message: message)
    }

    /// A statement that started COPY leaves the session in copy mode; end it so
    /// the connection stays usable (COPY IN is aborted, COPY OUT drained).
    private func abandonCopy(_ status: ExecStatusType, on handle: OpaquePointer) {
        if status == PGRES_COPY_IN || status == PGRES_COPY_BOTH {
            _ = PQputCopyEnd(handle, "COPY is not supported through execute")
        }
        if status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
            var buffer: UnsafeMutablePointer<CChar>?
            while PQgetCopyData(handle, &buffer, 0) >= 0 {
                if let chunk = buffer { PQfreemem(chunk) }
                buffer = nil
            }
        }
        while let pending = PQgetResult(handle) { PQclear(pending) }
    }
}
