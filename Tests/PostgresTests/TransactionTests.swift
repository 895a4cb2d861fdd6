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

    /// BEGIN and the opening statements go in one round trip; the closing
    /// statements, built from their answers, and COMMIT in a second. An error
    /// in either, or from the closing step itself, rolls all of it back and
    /// leaves the session usable.
    @Test func aTwoRoundTripTransactionCommitsWhatItsOpeningDecides() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let insert = "INSERT INTO \(schema).t SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING RETURNING id"
            /// Inserts `ids`, then each id the first insert claimed plus 100.
            func write(_ ids: [Int64], thenAlso extra: PostgresStatement? = nil, failing: Bool = false) throws -> [Int64] {
                try connection.transaction(opening: [PostgresStatement(insert, [.textArray(ids.map(String.init))])]) { opened in
                    if failing { throw BodyFailed() }
                    let claimed = (0..<opened[0].rowCount).compactMap { opened[0].int($0, "id") }.sorted()
                    let next = PostgresStatement(insert, [.textArray(claimed.map { String($0 + 100) })])
                    return ([next] + (extra.map { [$0] } ?? []), claimed)
                }
            }
            func ids() throws -> String? {
                try connection.execute("SELECT string_agg(id::text, ',' ORDER BY id) AS ids FROM \(schema).t").string(0, "ids")
            }
            #expect(try write([1, 2]) == [1, 2])
            #expect(try write([2, 3]) == [3])
            #expect(try ids() == "1,2,3,101,102,103")

            #expect(throws: BodyFailed.self) { try write([4], failing: true) }
            #expect(throws: PostgresError.self) { try write([5], thenAlso: PostgresStatement("SELECT 1/0")) }
            #expect(throws: PostgresError.self) {
                try connection.transaction(opening: [PostgresStatement(insert, [.textArray(["6"])]), PostgresStatement("SELECT 1/0")]) { _ in ([], 0) }
            }
            #expect(try ids() == "1,2,3,101,102,103")
            #expect(try write([7]) == [7])
            #expect(try ids() == "1,2,3,7,101,102,103,107")
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
