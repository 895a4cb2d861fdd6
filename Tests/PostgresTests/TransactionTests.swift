import Postgres
import Testing

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct TransactionTests {
    struct BodyFailed: Error {}

    @Test func committedRowsAreVisibleToOtherSessions() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let inserted = try connection.transaction { tx in
                try tx.execute("INSERT INTO \(schema).t VALUES (1), (2)").affectedRows
            }
            #expect(inserted == 2)
            let other = try TestServer.connect()
            defer { other.close() }
            #expect(try other.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 2)
        }
    }

    @Test func aThrowingBodyRollsEverythingBack() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            #expect(throws: BodyFailed.self) {
                try connection.transaction { tx in
                    try tx.execute("INSERT INTO \(schema).t VALUES (1)")
                    try tx.insertRows(into: "\(schema).t", columns: ["id"], rows: [[.int(2)], [.int(3)]])
                    throw BodyFailed()
                }
            }
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
            // The connection is idle again and usable for the next transaction.
            try connection.transaction { tx in try tx.execute("INSERT INTO \(schema).t VALUES (4)") }
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 1)
        }
    }

    @Test func aSwallowedStatementErrorMakesCommitThrow() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let error = #expect(throws: PostgresError.self) {
                try connection.transaction { tx in
                    try tx.execute("INSERT INTO \(schema).t VALUES (1)")
                    _ = try? tx.execute("INSERT INTO \(schema).t VALUES (1)")  // 23505, ignored
                }
            }
            #expect(error?.sqlState == "25P02")
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
        }
    }

    /// BEGIN and the opening statements go in one round trip; the body builds
    /// the next statements from their answers; its nil rolls all of it back,
    /// a value commits all of it, and an optional nil from `transaction(_:)` still commits.
    @Test func aTransactionOpenedByStatementsCommitsOrRollsBackWhatItsBodyAdds() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let insert = "INSERT INTO \(schema).t SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING RETURNING id"
            func write(_ ids: [Int64], keep: Bool) throws -> [Int64]? {
                try connection.transaction(opening: [PostgresStatement(insert, [.textArray(ids.map(String.init))])]) { opened in
                    let claimed = (0..<opened[0].rowCount).compactMap { opened[0].int($0, "id") }
                    // The next statement depends on what the first one answered.
                    _ = try connection.pipeline([PostgresStatement(insert, [.textArray(claimed.map { String($0 + 100) })])])
                    return keep ? claimed.sorted() : nil
                }
            }
            #expect(try write([1, 2], keep: false) == nil)
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
            #expect(try write([1, 2], keep: true) == [1, 2])
            #expect(try write([2, 3], keep: true) == [3])
            let ids = try connection.execute("SELECT string_agg(id::text, ',' ORDER BY id) AS ids FROM \(schema).t").string(0, "ids")
            #expect(ids == "1,2,3,101,102,103")

            let committedNil: Int? = try connection.transaction { tx in
                try tx.execute("INSERT INTO \(schema).t VALUES (7)")
                return nil
            }
            #expect(committedNil == nil)
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t WHERE id = 7").int(0, "n") == 1)
            // A failing opening statement rolls back and leaves the session usable.
            #expect(throws: PostgresError.self) {
                try connection.transaction(opening: [PostgresStatement("INSERT INTO \(schema).t VALUES (8)"), PostgresStatement("SELECT 1/0")]) { $0 }
            }
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t WHERE id = 8").int(0, "n") == 0)
        }
    }

    @Test func transactionsDoNotNest() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { tx in try tx.transaction { _ in 1 } }
        }
        #expect(error?.sqlState == "25001")
    }

    @Test func advisoryLockExcludesAnotherSession() throws {
        let holder = try TestServer.connect()
        let other = try TestServer.connect()
        defer { holder.close(); other.close() }
        let key = Int64.random(in: 1...Int64.max)
        let tryLock = "SELECT pg_try_advisory_lock($1) AS got"
        let seenInside = try holder.withAdvisoryLock(key) {
            try other.execute(tryLock, [.int(key)]).bool(0, "got")
        }
        #expect(seenInside == false)
        // Released afterwards, also when the body throws.
        #expect(throws: BodyFailed.self) { try holder.withAdvisoryLock(key) { throw BodyFailed() } }
        #expect(try other.execute(tryLock, [.int(key)]).bool(0, "got") == true)
        try other.execute("SELECT pg_advisory_unlock($1)", [.int(key)])
    }
}
