import Postgres

extension PostgresConnection {
    /// Runs a bounded statement (`statement(limit)` touches at most `limit`
    /// rows) until a run touches none, each run committed on its own, so a
    /// large purge or erasure never holds locks the write path waits for.
    /// Not until a run touches fewer than `limit`: a row another transaction
    /// changed meanwhile can be passed over by one run and must be found by
    /// the next. Every statement given here stops matching the rows it
    /// touched (deleted, or their mark cleared), so the loop ends.
    /// Returns the rows touched in all.
    func repeatUntilDone(batchSize: Int, _ statement: (Int) -> PostgresStatement) throws -> Int {
        var total = 0
        while true {
            let touched = try execute(statement(batchSize)).affectedRows
            total += touched
            if touched == 0 { return total }
        }
    }
}
