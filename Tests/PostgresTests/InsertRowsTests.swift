import Postgres
import Testing

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct InsertRowsTests {
    @Test func seventyThousandRowsChunkPastTheParameterLimitAndConflictsCountOnlyNewRows() throws {
        try TestServer.withScratchSchema { connection, schema in
            let table = "\(schema).\(PostgresConnection.quoteIdentifier("Events"))"
            try connection.executeScript("CREATE TABLE \(table) (id bigint PRIMARY KEY, name text NOT NULL)")
            // 2 columns × 70,000 rows = 140,000 parameters: three statements.
            let first = (0..<70_000).map { [PostgresValue.int(Int64($0)), .text("row \($0)")] }
            #expect(try connection.insertRows(into: table, columns: ["id", "name"], rows: first) == 70_000)

            // Half of these ids exist already.
            let second = (35_000..<105_000).map { [PostgresValue.int(Int64($0)), .text("again \($0)")] }
            let inserted = try connection.transaction { tx in
                try tx.insertRows(into: table, columns: ["id", "name"], rows: second, suffix: "ON CONFLICT (id) DO NOTHING")
            }
            #expect(inserted == 35_000)
            let check = try connection.execute("SELECT count(*) AS n, min(name) FILTER (WHERE id = 35000) AS kept FROM \(table)")
            #expect(check.int(0, "n") == 105_000)
            #expect(check.string(0, "kept") == "row 35000")
        }
    }

    @Test func aFailingChunkLeavesNothingBehindOutsideATransaction() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            // One column → 65,535 rows per chunk; the duplicate sits in the second chunk.
            let rows = (0..<70_000).map { [PostgresValue.int(Int64($0))] } + [[.int(1)]]
            let error = #expect(throws: PostgresError.self) {
                try connection.insertRows(into: "\(schema).t", columns: ["id"], rows: rows)
            }
            #expect(error?.sqlState == "23505")
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
        }
    }

    @Test func rowsMustMatchTheColumns() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let error = #expect(throws: PostgresError.self) {
            try connection.insertRows(into: "nowhere", columns: ["a", "b"], rows: [[.int(1), .int(2)], [.int(3)]])
        }
        #expect(error?.kind == .client)
        #expect(try connection.insertRows(into: "nowhere", columns: ["a"], rows: []) == 0)
    }
}
