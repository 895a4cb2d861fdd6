import CLibPQ

/// What one command queued in a pipeline answers: a Prepare's result only
/// confirms its statement, a statement's result goes back to the caller.
enum PipelinedCommand {
    case prepare(PreparedStatementCache.Key)
    case statement
}

extension PostgresConnection {
    /// Queues `sql` in pipeline mode, by name when the session has it
    /// prepared, or preceded by its Prepare when the cache takes it. False
    /// when libpq refused a send; `commands` then already lists what went out.
    func sendPipelined(_ sql: String, _ parameters: ParameterBuffer, on handle: OpaquePointer,
                       commands: inout [PipelinedCommand]) -> Bool {
        switch statementCache.plan(sql: sql, types: parameters.types) {
        case .unnamed:
            let accepted = parameters.withUnsafeArguments { types, values, lengths, formats in
                PQsendQueryParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 0)
            }
            guard accepted == 1 else { return false }
        case .prepared(let name):
            guard sendQueryPrepared(name, parameters, on: handle) else { return false }
        case .prepare(let key, let name):
            let accepted = parameters.withUnsafeArguments { types, _, _, _ in
                PQsendPrepare(handle, name, sql, Int32(parameters.count), types)
            }
            guard accepted == 1 else { return false }
            commands.append(.prepare(key))
            guard sendQueryPrepared(name, parameters, on: handle) else { return false }
        }
        commands.append(.statement)
        return true
    }

    private func sendQueryPrepared(_ name: String, _ parameters: ParameterBuffer, on handle: OpaquePointer) -> Bool {
        parameters.withUnsafeArguments { _, values, lengths, formats in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 0)
        } == 1
    }

    /// Runs `sql` alone and returns libpq's result (nil when it could not be
    /// sent): by name when prepared, else prepared first if the cache takes it
    /// (one more round trip, once per session), else unnamed. `reuse: false`
    /// for text that will not recur, which would only fill the cache.
    func executeCached(_ sql: String, _ parameters: ParameterBuffer, reuse: Bool, on handle: OpaquePointer) throws(PostgresError) -> OpaquePointer? {
        let plan = reuse ? statementCache.plan(sql: sql, types: parameters.types) : .unnamed
        let name: String
        switch plan {
        case .unnamed:
            return parameters.withUnsafeArguments { types, values, lengths, formats in
                PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 0)
            }
        case .prepared(let prepared):
            name = prepared
        case .prepare(let key, let prepared):
            let result = parameters.withUnsafeArguments { types, _, _, _ in
                PQprepare(handle, prepared, sql, Int32(parameters.count), types)
            }
            _ = try consume(result, on: handle)
            statementCache.confirm(key)
            name = prepared
        }
        return parameters.withUnsafeArguments { _, values, lengths, formats in
            PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 0)
        }
    }
}
