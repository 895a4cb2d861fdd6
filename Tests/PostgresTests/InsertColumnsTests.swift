import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct InsertColumnsTests {
    static let columns: [PostgresColumn] = [
        .init("k", "integer"), .init("t", "text"), .init("b", "bytea"), .init("i", "bigint"), .init("d", "double precision"),
        .init("f", "boolean"), .init("ts", "timestamptz"), .init("a", "text[]"), .init("n", "text"),
    ]

    @Test func everyValueArrivesAsAParameterWouldHaveSentIt() throws {
        try TestServer.withScratchSchema { connection, schema in
            let create = "(k int PRIMARY KEY, t text, b bytea, i bigint, d double precision, f boolean, ts timestamptz, a text[], n text)"
            try connection.executeScript("CREATE TABLE \(schema).by_columns \(create); CREATE TABLE \(schema).by_rows \(create)")
            let allBytes = (0...255).map { UInt8($0) } + [0, 0, 0]
            let rows: [[PostgresValue]] = [
                [.int(1), .text(ValueRoundTripTests.awkwardText), .bytes(allBytes), .int(.max), .double(3.141592653589793), .bool(true),
                 .timestamp(Date(timeIntervalSinceReferenceDate: 817_000_000.123456)),
                 .textArray(["a", "", "NULL", "with,comma", "q\"b\\s", "{br}", "ü", " blank "]), .null],
                [.int(2), .text(""), .bytes([]), .int(.min), .double(-1e-300), .bool(false),
                 .timestamp(Date(timeIntervalSince1970: -2_208_988_800.5)), .textArray([]), .text("NULL")],
                [.int(3), .null, .bytes([0]), .int(0), .double(.infinity), .null, .null, .null, .text("{\"x\",}")],
                [.int(4), .text("infinity"), .null, .null, .double(.nan), .null, .text("infinity"), .textArray(["\""]), .text(" ")],
            ]
            let inserted = try connection.insertColumns(into: "\(schema).by_columns", columns: Self.columns, rows: rows)
            #expect(inserted.affectedRows == 4)
            for row in rows {
                try connection.execute("INSERT INTO \(schema).by_rows VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", row)
            }
            let differences = try connection.execute("""
                SELECT count(*) AS n FROM ((TABLE \(schema).by_columns EXCEPT TABLE \(schema).by_rows)
                                           UNION ALL (TABLE \(schema).by_rows EXCEPT TABLE \(schema).by_columns)) AS d
                """)
            #expect(differences.int(0, "n") == 0)
            let check = try connection.execute("SELECT t, b, a, n FROM \(schema).by_columns ORDER BY k")
            #expect(check.string(0, "t") == ValueRoundTripTests.awkwardText)
            #expect(check.bytes(0, "b") == allBytes)
            #expect(check.isNull(0, "n"))
            #expect(check.string(1, "n") == "NULL")
            #expect(check.string(1, "a") == "{}")
            #expect(check.isNull(2, "t"))
        }
    }

    @Test func conflictsAndReturningWorkAsInAValuesInsertAndTheFirstOfTwoWins() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t (id text PRIMARY KEY, name text NOT NULL)")
            let columns: [PostgresColumn] = [.init("id", "text"), .init("name", "text")]
            _ = try connection.insertColumns(into: "\(schema).t", columns: columns, rows: [[.text("a"), .text("first a")]])
            let result = try connection.insertColumns(
                into: "\(schema).t", columns: columns,
                rows: [[.text("a"), .text("again")], [.text("b"), .text("first b")], [.text("b"), .text("second b")], [.text("c"), .text("c")]],
                suffix: "ON CONFLICT (id) DO NOTHING RETURNING id")
            #expect(Set((0..<result.rowCount).compactMap { result.string($0, "id") }) == ["b", "c"])
            let names = try connection.execute("SELECT string_agg(name, '|' ORDER BY id) AS names FROM \(schema).t")
            #expect(names.string(0, "names") == "first a|first b|c")
            // Many rows: one statement, no parameter limit.
            let many = (0..<100_000).map { [PostgresValue.text("m\($0)"), .text("row \($0)")] }
            #expect(try connection.insertColumns(into: "\(schema).t", columns: columns, rows: many).affectedRows == 100_000)
        }
    }

    @Test func refusesWhatItCannotSend() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let mismatched = #expect(throws: PostgresError.self) {
            try connection.insertColumns(into: "nowhere", columns: [.init("a", "text"), .init("b", "text")], rows: [[.text("1"), .text("2")], [.text("3")]])
        }
        #expect(mismatched?.kind == .client)
        let nul = #expect(throws: PostgresError.self) {
            try connection.insertColumns(into: "nowhere", columns: [.init("a", "text")], rows: [[.text("a\u{0}b")]])
        }
        #expect(nul?.sqlState == "22021")
    }
}
