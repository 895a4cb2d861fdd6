import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct PostgresPipelineTests {
    @Test func statementsRunInOrderAndEachResultComesBack() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY, name text, data bytea)")
            let results = try connection.pipeline([
                PostgresStatement("BEGIN"),
                try .insertColumns(into: "\(schema).t", columns: [.init("id", "bigint"), .init("name", "text"), .init("data", "bytea")],
                                   rows: [[.int(1), .text("a \"quoted\" one"), .bytes([0, 0xff])], [.int(2), .null, .bytes([])]]),
                PostgresStatement("INSERT INTO \(schema).t (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id", [.int(2)]),
                PostgresStatement("UPDATE \(schema).t SET name = $1 WHERE id = ANY($2::text[]::bigint[])", [.text("b"), .textArray(["2"])]),
                PostgresStatement("SELECT id, name, data FROM \(schema).t ORDER BY id"),
                PostgresStatement("COMMIT"),
            ])
            #expect(results.map(\.commandTag) == ["BEGIN", "INSERT 0 2", "INSERT 0 0", "UPDATE 1", "SELECT 2", "COMMIT"])
            #expect(results[2].rowCount == 0)
            let rows = results[4]
            #expect(rows.string(0, "name") == "a \"quoted\" one" && rows.bytes(0, "data") == [0, 0xff])
            #expect(rows.string(1, "name") == "b" && rows.bytes(1, "data") == [])
            // Out of pipeline mode again: plain statements work.
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 2)
            #expect(try connection.pipeline([]).isEmpty)
        }
    }

    @Test func theFirstFailureIsThrownAndWhatFollowsItDoesNotRun() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY); CREATE TABLE \(schema).after (id bigint)")
            let error = #expect(throws: PostgresError.self) {
                try connection.pipeline([
                    PostgresStatement("BEGIN"),
                    PostgresStatement("INSERT INTO \(schema).t VALUES (1), (2)"),
                    PostgresStatement("INSERT INTO \(schema).t VALUES (2)"),  // 23505
                    PostgresStatement("SELECT 1/0"),  // would be 22012 if it ran
                    PostgresStatement("INSERT INTO \(schema).after VALUES (1)"),
                ])
            }
            #expect(error?.sqlState == "23505")
            #expect(error?.kind == .server)
            // The transaction block is aborted until rolled back; then nothing of it is left.
            #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
            try connection.execute("ROLLBACK")
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).after").int(0, "n") == 0)
            // The session pipelines again.
            #expect(try connection.pipeline([PostgresStatement("INSERT INTO \(schema).t VALUES (3)")]).first?.affectedRows == 1)
        }
    }

    @Test func withoutABlockTheStatementsAreOneImplicitTransaction() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint PRIMARY KEY)")
            #expect(throws: PostgresError.self) {
                try connection.pipeline([
                    PostgresStatement("INSERT INTO \(schema).t VALUES (1)"),
                    PostgresStatement("INSERT INTO \(schema).t VALUES (1)"),
                ])
            }
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
        }
    }

    @Test func aClientErrorIsThrownBeforeAnythingIsSent() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id bigint)")
            let tooMany = [PostgresValue](repeating: .int(1), count: 70_000)
            let error = #expect(throws: PostgresError.self) {
                try connection.pipeline([PostgresStatement("INSERT INTO \(schema).t VALUES (1)"), PostgresStatement("SELECT 1", tooMany)])
            }
            #expect(error?.kind == .client)
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
        }
    }

    /// The server writes a large result while the client is still sending a
    /// large statement: both socket buffers fill, and only a client that reads
    /// while it waits to write gets through.
    @Test(.timeLimit(.minutes(10))) func largeResultsAndLargeParametersDoNotDeadlock() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (body text)")
            let body = String(repeating: "x", count: 8 << 20)
            let results = try connection.pipeline([
                PostgresStatement("SELECT repeat('y', 1000) AS line FROM generate_series(1, 20000)"),
                PostgresStatement("INSERT INTO \(schema).t VALUES ($1)", [.text(body)]),
                PostgresStatement("SELECT length(body) AS n FROM \(schema).t"),
            ])
            #expect(results[0].rowCount == 20000)
            #expect(results[2].int(0, "n") == Int64(body.utf8.count))
        }
    }

    @Test func aTerminatedBackendIsAConnectionErrorNotAHang() throws {
        let victim = try TestServer.connect()
        let admin = try TestServer.connect()
        defer { victim.close(); admin.close() }
        let pid = try #require(victim.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
        let error = #expect(throws: PostgresError.self) {
            try victim.pipeline([
                PostgresStatement("SELECT pg_terminate_backend($1::int) AS ok", [.int(pid)]),
                PostgresStatement("SELECT pg_sleep(5)"),
            ])
        }
        // 57P01 from the server, or the closed socket: either way transient, and reset recovers.
        #expect(error?.isTransient == true)
        try victim.reset()
        #expect(try victim.pipeline([PostgresStatement("SELECT 1 AS one")]).first?.int(0, "one") == 1)
    }
}
