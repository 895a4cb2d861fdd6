import Foundation
@testable import Postgres
import Testing

/// Statements with parameters run as named statements prepared once per
/// session. What the server holds is read from `pg_prepared_statements` on
/// the same session, with a query without parameters (so it is not prepared itself).
@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct PreparedStatementTests {
    /// The session's named statements whose text is `sql`: their names and parameter types.
    static func prepared(_ sql: String, on connection: PostgresConnection) throws -> [(name: String, types: String)] {
        let rows = try connection.execute("SELECT name, statement, parameter_types::text AS types FROM pg_prepared_statements ORDER BY name")
        return (0..<rows.rowCount).compactMap { row in
            guard rows.string(row, "statement") == sql, let name = rows.string(row, "name") else { return nil }
            return (name, rows.string(row, "types") ?? "")
        }
    }

    static func allPrepared(on connection: PostgresConnection) throws -> Int {
        Int(try connection.execute("SELECT count(*) AS n FROM pg_prepared_statements").int(0, "n") ?? -1)
    }

    static func count(_ table: String, on connection: PostgresConnection) throws -> Int64? {
        try connection.execute("SELECT count(*) AS n FROM \(table)").int(0, "n")
    }

    @Test func aStatementIsPreparedOnceAndEachTypeVectorGetsItsOwn() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY, name text)")
            let insert = "INSERT INTO \(schema).t (id, name) VALUES ($1, $2)"
            for id in 1...12 {
                let results = try connection.pipeline([PostgresStatement("BEGIN"), PostgresStatement(insert, [.int(Int64(id)), .text("n\(id)")]),
                                                       PostgresStatement("COMMIT")])
                #expect(results.map(\.commandTag) == ["BEGIN", "INSERT 0 1", "COMMIT"])
            }
            #expect(try Self.prepared(insert, on: connection).map(\.types) == ["{bigint,text}"])
            // execute takes the same statement by name.
            for id in 13...15 { try connection.execute(insert, [.int(Int64(id)), .text("n")]) }
            #expect(try Self.prepared(insert, on: connection).count == 1)

            // The id as text (type OID 0, left to the server to infer): the same SQL, another type vector.
            for id in 16...18 { try connection.execute(insert, [.text(String(id)), .text("n")]) }
            #expect(try Self.prepared(insert, on: connection).count == 2)
            #expect(try Self.count("\(schema).t", on: connection) == 18)

            // insertColumns: a text column goes as a binary text[], or as a literal when a value is an .int;
            // the same statement text either way.
            let columns: [PostgresColumn] = [.init("id", "bigint"), .init("name", "text")]
            let binary = try PostgresStatement.insertColumns(into: "\(schema).t", columns: columns, rows: [[.int(100), .text("b")]])
            let literal = try PostgresStatement.insertColumns(into: "\(schema).t", columns: columns, rows: [[.int(200), .int(7)]])
            #expect(binary.sql == literal.sql)
            for round in 1...3 {
                let offset = Int64(round)
                let results = try connection.pipeline([
                    try .insertColumns(into: "\(schema).t", columns: columns, rows: [[.int(100 + offset), .text("b")], [.int(110 + offset), .null]]),
                    try .insertColumns(into: "\(schema).t", columns: columns, rows: [[.int(200 + offset), .int(7)]]),
                ])
                #expect(results.map(\.affectedRows) == [2, 1])
            }
            #expect(try Self.prepared(binary.sql, on: connection).map(\.types) == ["{bigint[],text[]}", "{bigint[],text[]}"])
            #expect(try connection.execute("SELECT name FROM \(schema).t WHERE id = 203").string(0, "name") == "7")
            // Statements without parameters are not prepared: exactly the four above are.
            #expect(try Self.allPrepared(on: connection) == 4)
        }
    }

    @Test func aStatementSkippedAfterAFailureIsNotCached() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let failing = "SELECT 1 / $1::int AS q"
            let skipped = "INSERT INTO \(schema).t (id) VALUES ($1)"
            let error = #expect(throws: PostgresError.self) {
                try connection.pipeline([PostgresStatement(failing, [.int(0)]), PostgresStatement(skipped, [.int(1)])])
            }
            #expect(error?.sqlState == "22012")
            // The failing statement was prepared (its Prepare came back before its execution failed);
            // the Prepare of the one after it was skipped, and the cache must not believe otherwise.
            #expect(try Self.prepared(failing, on: connection).count == 1)
            #expect(try Self.prepared(skipped, on: connection).isEmpty)
            #expect(try connection.pipeline([PostgresStatement(skipped, [.int(2)])]).first?.affectedRows == 1)
            #expect(try Self.prepared(skipped, on: connection).count == 1)
            #expect(try connection.pipeline([PostgresStatement(failing, [.int(1)])]).first?.int(0, "q") == 1)

            // The same for execute: a Prepare that fails (unknown column) caches nothing, and the next
            // statement with parameters is prepared under a new name.
            let broken = "SELECT no_such_column FROM \(schema).t WHERE id = $1"
            #expect(throws: PostgresError.self) { try connection.execute(broken, [.int(1)]) }
            #expect(try Self.prepared(broken, on: connection).isEmpty)
            #expect(try connection.execute("SELECT id FROM \(schema).t WHERE id = $1", [.int(2)]).int(0, "id") == 2)
        }
    }

    @Test func aStatementUsedTwiceInOnePipelineIsPreparedOnce() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let insert = "INSERT INTO \(schema).t (id) VALUES ($1)"
            let results = try connection.pipeline((1...3).map { PostgresStatement(insert, [.int(Int64($0))]) })
            #expect(results.map(\.affectedRows) == [1, 1, 1])
            #expect(try Self.prepared(insert, on: connection).count == 1)
            #expect(try Self.count("\(schema).t", on: connection) == 3)
        }
    }

    /// A Parse is not undone by ROLLBACK: a statement first prepared in a
    /// transaction that is rolled back stays prepared, so the cache keeping it is right.
    @Test func rolledBackTransactionsKeepTheirPreparedStatements() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let insert = "INSERT INTO \(schema).t (id) VALUES ($1)"

            // Its closing step throws: ROLLBACK.
            #expect(throws: TransactionTests.BodyFailed.self) {
                try connection.transaction(opening: [PostgresStatement(insert, [.int(1)])]) { _ -> ([PostgresStatement], Int) in
                    throw TransactionTests.BodyFailed()
                }
            }
            #expect(try Self.prepared(insert, on: connection).count == 1)
            // Failed after the new statement ran: the pipeline's transaction is rolled back.
            let other = "INSERT INTO \(schema).t (id) SELECT $1 WHERE true"
            #expect(throws: PostgresError.self) {
                try connection.transaction(opening: [PostgresStatement(other, [.int(2)]), PostgresStatement(insert, [.int(2)]),
                                                     PostgresStatement(insert, [.int(2)])]) { _ in ([], 0) }
            }
            // A body that throws after execute prepared a statement: ROLLBACK.
            let third = "INSERT INTO \(schema).t (id) SELECT $1::bigint + 0"
            #expect(throws: TransactionTests.BodyFailed.self) {
                try connection.transaction { tx in
                    try tx.execute(third, [.int(3)])
                    throw TransactionTests.BodyFailed()
                }
            }
            #expect(try Self.count("\(schema).t", on: connection) == 0)
            for sql in [insert, other, third] { #expect(try Self.prepared(sql, on: connection).count == 1, "\(sql)") }

            // Each is executed by name now, and works.
            let counts = try connection.transaction(opening: [PostgresStatement(insert, [.int(4)]), PostgresStatement(other, [.int(5)])]) { opened in
                ([], opened.map(\.affectedRows))
            }
            #expect(counts == [1, 1])
            try connection.transaction { tx in try tx.execute(third, [.int(6)]) }
            #expect(try Self.count("\(schema).t", on: connection) == 3)
            for sql in [insert, other, third] { #expect(try Self.prepared(sql, on: connection).count == 1, "\(sql)") }
        }
    }

    @Test func aResetSessionPreparesAgain() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let insert = "INSERT INTO \(schema).t (id) VALUES ($1)"
            try connection.execute(insert, [.int(1)])
            #expect(try connection.pipeline([PostgresStatement(insert, [.int(2)])]).first?.affectedRows == 1)
            let pid = try #require(connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))

            let admin = try TestServer.connect()
            defer { admin.close() }
            try TestServer.terminate(pid, from: admin)
            let lost = #expect(throws: PostgresError.self) { try connection.pipeline([PostgresStatement(insert, [.int(3)])]) }
            #expect(lost?.isTransient == true)

            try connection.reset()
            #expect(try connection.execute("SELECT pg_backend_pid() AS pid").int(0, "pid") != pid)
            // The new session has no statements; the cache must not name one.
            #expect(try Self.allPrepared(on: connection) == 0)
            #expect(try connection.pipeline([PostgresStatement(insert, [.int(3)])]).first?.affectedRows == 1)
            try connection.execute(insert, [.int(4)])
            #expect(try Self.prepared(insert, on: connection).count == 1)
            #expect(try Self.count("\(schema).t", on: connection) == 4)

            // A new connection from ReconnectingConnection starts empty as well.
            let reconnecting = ReconnectingConnection { try TestServer.connect() }
            defer { reconnecting.drop() }
            try reconnecting.get().execute(insert, [.int(5)])
            #expect(try Self.prepared(insert, on: try reconnecting.get()).count == 1)
        }
    }

    /// Statements dropped behind the cache's back (DEALLOCATE ALL, DISCARD ALL,
    /// a pooler's session switch) fail once with 26000; the retry prepares again.
    @Test func aMissingStatementClearsTheCacheForTheRetry() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            let insert = "INSERT INTO \(schema).t (id) VALUES ($1)"
            let select = "SELECT count(*) AS n FROM \(schema).t WHERE id >= $1"
            try connection.execute(insert, [.int(1)])
            try connection.execute(select, [.int(0)])
            try connection.executeScript("DEALLOCATE ALL")

            let missing = #expect(throws: PostgresError.self) { try connection.pipeline([PostgresStatement(insert, [.int(2)])]) }
            #expect(missing?.sqlState == "26000")
            // Every entry was forgotten, not only the one that failed.
            #expect(try connection.execute(select, [.int(0)]).int(0, "n") == 1)
            #expect(try connection.pipeline([PostgresStatement(insert, [.int(2)])]).first?.affectedRows == 1)
            try connection.executeScript("DEALLOCATE ALL")
            let missingAlone = #expect(throws: PostgresError.self) { try connection.execute(insert, [.int(3)]) }
            #expect(missingAlone?.sqlState == "26000")
            try connection.execute(insert, [.int(3)])
            #expect(try Self.count("\(schema).t", on: connection) == 3)
        }
    }

    @Test func optedOutNothingIsPreparedAndEverythingWorks() throws {
        let connection = try PostgresConnection(connectionString: TestServer.connectionString!, applicationName: "veridoc-tests", preparedStatements: false)
        defer { connection.close() }
        let schema = PostgresConnection.quoteIdentifier(TestServer.randomName("t"))
        try connection.executeScript("CREATE SCHEMA \(schema); CREATE TABLE \(schema).t (id bigint PRIMARY KEY, name text)")
        defer { try? connection.executeScript("DROP SCHEMA \(schema) CASCADE") }
        let insert = "INSERT INTO \(schema).t (id, name) VALUES ($1, $2)"
        for id in 1...3 {
            try connection.execute(insert, [.int(Int64(id)), .text("a")])
            _ = try connection.transaction(opening: [
                PostgresStatement(insert, [.int(Int64(10 + id)), .null]),
                try .insertColumns(into: "\(schema).t", columns: [.init("id", "bigint"), .init("name", "text")], rows: [[.int(Int64(20 + id)), .text("c")]]),
            ]) { _ in ([], 0) }
            try connection.insertColumns(into: "\(schema).t", columns: [.init("id", "bigint"), .init("name", "text")], rows: [[.int(Int64(30 + id)), .int(5)]])
        }
        #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t WHERE id > $1", [.int(0)]).int(0, "n") == 12)
        #expect(try Self.allPrepared(on: connection) == 0)
    }

    /// Prepared or not, `insertColumns` stores the same, in binary and as text
    /// literals, through `execute` and in a pipeline, also once the server uses
    /// a generic plan (after five executions).
    @Test func preparedInsertColumnsStoreWhatUnnamedOnesStore() throws {
        try TestServer.withScratchSchema { connection, schema in
            let unprepared = try PostgresConnection(connectionString: TestServer.connectionString!, applicationName: "veridoc-tests", preparedStatements: false)
            defer { unprepared.close() }
            let tables = ["prepared_binary", "prepared_literal", "unnamed_binary", "unnamed_literal"]
            try connection.executeScript(tables.map { "CREATE TABLE \(schema).\($0) \(InsertColumnsBinaryTests.tableColumns)" }.joined(separator: "; "))
            let rows = InsertColumnsBinaryTests.rows
            for round in 0..<8 {
                // New keys each round, the same values.
                let keyed = rows.enumerated().map { [PostgresValue.int(Int64(round * 1000 + $0.offset))] + $0.element.dropFirst() }
                for (on, prefix) in [(connection, "prepared"), (unprepared, "unnamed")] {
                    let binary = try PostgresStatement.insertColumns(into: "\(schema).\(prefix)_binary", columns: InsertColumnsBinaryTests.binaryColumns, rows: keyed)
                    let literal = try PostgresStatement.insertColumns(into: "\(schema).\(prefix)_literal", columns: InsertColumnsBinaryTests.literalColumns, rows: keyed)
                    if round % 2 == 0 {
                        #expect(try on.pipeline([binary, literal]).map(\.affectedRows) == [rows.count, rows.count])
                    } else {
                        #expect(try on.execute(binary).affectedRows == rows.count)
                        #expect(try on.execute(literal).affectedRows == rows.count)
                    }
                }
            }
            let preparedCount = try Self.allPrepared(on: connection)
            #expect(preparedCount == 2)
            #expect(try Self.allPrepared(on: unprepared) == 0)
            let read = try tables.map { try InsertColumnsBinaryTests.read("\(schema).\($0)", on: connection) }
            #expect(read[0].count == rows.count * 8)
            for table in read.dropFirst() {
                #expect(table.count == read[0].count)
                for index in table.indices where table[index] != read[0][index] {
                    Issue.record("row \(index) differs: \(table[index]) vs \(read[0][index])")
                }
            }
        }
    }
}
