import Postgres

extension PostgresConnection {
    /// Runs a bounded statement (`statement(limit)` touches at most `limit`
    /// rows) until a run touches fewer, each run committed on its own, so a
    /// large purge or erasure never holds locks the write path waits for.
    /// Returns the rows touched in all.
    func repeatUntilDone(batchSize: Int, _ statement: (Int) -> PostgresStatement) throws -> Int {
        var total = 0
        while true {
            let touched = try execute(statement(batchSize)).affectedRows
            total += touched
            if touched < batchSize { return total }
        }
    }
}
