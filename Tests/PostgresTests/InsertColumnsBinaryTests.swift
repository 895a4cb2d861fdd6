import Foundation
@testable import Postgres
import Testing

/// `insertColumns`'s binary arrays store what the text forms stored. The same
/// rows go in three ways: binary arrays (the types as tables spell them), text
/// array literals (the same types schema-qualified, which `ArrayElement` does
/// not know, so they take the literal path as every column did before) and a
/// plain one-row INSERT per row; all three must read back identically.
@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct InsertColumnsBinaryTests {
    static let tableColumns = """
        (k integer PRIMARY KEY, t text, b bytea, f boolean, s smallint, i integer, l bigint,
         d double precision, ts timestamptz, a text[], ia integer[], z integer)
        """
    static let binaryColumns: [PostgresColumn] = [
        .init("k", "integer"), .init("t", "text"), .init("b", "bytea"), .init("f", "boolean"), .init("s", "smallint"),
        .init("i", "integer"), .init("l", "bigint"), .init("d", "double precision"), .init("ts", "timestamptz"),
        .init("a", "text[]"), .init("ia", "integer[]"), .init("z", "integer"),
    ]
    static let literalColumns: [PostgresColumn] = [
        .init("k", "pg_catalog.int4"), .init("t", "pg_catalog.text"), .init("b", "pg_catalog.bytea"), .init("f", "pg_catalog.bool"),
        .init("s", "pg_catalog.int2"), .init("i", "pg_catalog.int4"), .init("l", "pg_catalog.int8"), .init("d", "pg_catalog.float8"),
        .init("ts", "pg_catalog.timestamptz"), .init("a", "text[]"), .init("ia", "integer[]"), .init("z", "pg_catalog.int4"),
    ]
    /// Read back as text, so -0 and 0, or timestamps a microsecond apart, differ.
    static let readBack = """
        SELECT t, encode(b, 'hex') AS b, f::text AS f, s::text AS s, i::text AS i, l::text AS l, d::text AS d,
               extract(epoch FROM ts)::text AS ts, a::text AS a, ia::text AS ia, z::text AS z,
               array_length(a, 1)::text AS alen, octet_length(t)::text AS tlen
        """

    /// 0001-01-01T00:00:00Z, the first instant the range rule allows.
    static let firstInstant = Date(timeIntervalSince1970: -62_135_596_800)
    /// The last Date before 10000-01-01 (a Double this far from 2001 steps by 2⁻¹⁵ s,
    /// so 9999-12-31T23:59:59.999999 itself is no Date; the nearest one is 10000-01-01).
    /// Stored as …59.999968: scaled to microseconds it is a Double too, in steps of 32.
    static let lastInstant = Date(timeIntervalSinceReferenceDate: (252_423_993_600.0).nextDown)

    static let texts: [PostgresValue] = [
        .text(ValueRoundTripTests.awkwardText), .text(""), .text("NULL"), .text("null"), .text("with,comma"), .text("q\"b\\s"),
        .text("{br}"), .text("{\"x\",}"), .text(" blank "), .text("\\"), .text("\""), .text("🦊👩‍👩‍👧"), .text("\u{FFFD}"), .null,
    ]
    static let byteas: [PostgresValue] = [.bytes((0...255).map { UInt8($0) }), .bytes([]), .bytes([0]), .bytes([0, 0, 0]), .bytes([0x5c, 0x78]), .null]
    static let bools: [PostgresValue] = [.bool(true), .bool(false), .null]
    static let smallints: [PostgresValue] = [.int(Int64(Int16.min)), .int(Int64(Int16.max)), .int(0), .int(-1), .null]
    static let integers: [PostgresValue] = [.int(Int64(Int32.min)), .int(Int64(Int32.max)), .int(0), .int(-1), .null]
    static let bigints: [PostgresValue] = [.int(.min), .int(.max), .int(0), .int(-1), .int(1 << 53 + 1), .null]
    static let doubles: [PostgresValue] = [
        .double(.nan), .double(.infinity), .double(-.infinity), .double(-0.0), .double(0), .double(3.141592653589793),
        .double(-1e-300), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(0.1), .null,
    ]
    static let timestamps: [PostgresValue] = [
        .timestamp(firstInstant), .timestamp(lastInstant),
        .timestamp(Date(timeIntervalSinceReferenceDate: 0.000_000_4)),  // rounds down to 2001-01-01T00:00:00
        .timestamp(Date(timeIntervalSinceReferenceDate: 0.000_000_6)),  // rounds up to …00.000001
        .timestamp(Date(timeIntervalSinceReferenceDate: -0.000_000_6)),  // rounds to …59.999999 the day before
        .timestamp(Date(timeIntervalSinceReferenceDate: 817_000_000.123456)),
        .timestamp(Date(timeIntervalSince1970: 946_684_799.999_999)),  // 1999-12-31T23:59:59.999999, before PostgreSQL's epoch
        .timestamp(Date(timeIntervalSince1970: 946_684_800)),  // PostgreSQL's epoch itself
        .timestamp(Date(timeIntervalSince1970: -0.5)),  // before 1970
        .timestamp(Date(timeIntervalSince1970: -2_208_988_800.5)),  // 1899
        .text("infinity"), .text("-infinity"), .null,
    ]
    static let textArrays: [PostgresValue] = [
        .textArray(["a", "", "NULL", "with,comma", "q\"b\\s", "{br}", "ü", " blank ", "\\", "\"", "🦊"]), .textArray([]),
        .textArray([""]), .textArray(["NULL"]), .text("{x,NULL,\"y z\"}"), .null,
    ]
    static let integerArrays: [PostgresValue] = [.text("{1,NULL,-3}"), .text("{}"), .text("{7,8}"), .null]

    /// Every value of every list at least once, then a row of NULLs.
    static var rows: [[PostgresValue]] {
        let lists = [texts, byteas, bools, smallints, integers, bigints, doubles, timestamps, textArrays, integerArrays, [.null]]
        let count = lists.map(\.count).max()!
        var rows = (0..<count).map { row in [PostgresValue.int(Int64(row))] + lists.map { row < $0.count ? $0[row] : .null } }
        rows.append([.int(Int64(count))] + lists.map { _ in .null })
        return rows
    }

    static func read(_ table: String, on connection: PostgresConnection) throws -> [[String?]] {
        let result = try connection.execute("\(readBack) FROM \(table) ORDER BY k")
        return (0..<result.rowCount).map { row in result.columnNames.map { result.string(row, $0) } }
    }

    @Test func everyTypeStoresWhatTheTextFormsStored() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE \(schema).binary \(Self.tableColumns); CREATE TABLE \(schema).literal \(Self.tableColumns);
                CREATE TABLE \(schema).by_rows \(Self.tableColumns)
                """)
            let rows = Self.rows
            let (_, buffer) = try PostgresConnection.unnestInsert(into: "x", columns: Self.binaryColumns, rows: rows, suffix: "")
            #expect(buffer.formats == Array(repeating: 1, count: Self.binaryColumns.count))
            #expect(buffer.types == [1007, 1009, 1001, 1000, 1005, 1007, 1016, 1022, 1185, 1009, 1009, 1007])
            let (_, literal) = try PostgresConnection.unnestInsert(into: "x", columns: Self.literalColumns, rows: rows, suffix: "")
            #expect(literal.formats == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0])

            #expect(try connection.insertColumns(into: "\(schema).binary", columns: Self.binaryColumns, rows: rows).affectedRows == rows.count)
            #expect(try connection.insertColumns(into: "\(schema).literal", columns: Self.literalColumns, rows: rows).affectedRows == rows.count)
            for row in rows {
                try connection.execute("INSERT INTO \(schema).by_rows VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)", row)
            }
            let binary = try Self.read("\(schema).binary", on: connection)
            let literalRows = try Self.read("\(schema).literal", on: connection)
            let byRows = try Self.read("\(schema).by_rows", on: connection)
            #expect(binary.count == rows.count)
            for index in binary.indices {
                #expect(binary[index] == literalRows[index], "row \(index)")
                #expect(binary[index] == byRows[index], "row \(index)")
            }

            // And what they stored is what was meant.
            let check = try connection.execute("SELECT k, t, b, s, i, l, d::text AS d, extract(epoch FROM ts)::text AS ts, a FROM \(schema).binary ORDER BY k")
            for (row, value) in Self.texts.enumerated() {
                if case .text(let text) = value { #expect(check.string(row, "t") == text) } else { #expect(check.isNull(row, "t")) }
            }
            for (row, value) in Self.byteas.enumerated() {
                if case .bytes(let bytes) = value { #expect(check.bytes(row, "b") == bytes) } else { #expect(check.isNull(row, "b")) }
            }
            #expect(check.int(0, "s") == Int64(Int16.min) && check.int(1, "s") == Int64(Int16.max))
            #expect(check.int(0, "i") == Int64(Int32.min) && check.int(1, "i") == Int64(Int32.max))
            #expect(check.int(0, "l") == .min && check.int(1, "l") == .max && check.int(4, "l") == 1 << 53 + 1)
            #expect((0..<10).map { check.string($0, "d") }
                    == ["NaN", "Infinity", "-Infinity", "-0", "0", "3.141592653589793", "-1e-300", "5e-324", "1.7976931348623157e+308", "0.1"])
            #expect((0..<12).map { check.string($0, "ts") } == [
                "-62135596800.000000", "253402300799.999968", "978307200.000000", "978307200.000001", "978307199.999999",
                "1795307200.123456", "946684799.999999", "946684800.000000", "-0.500000", "-2208988800.500000", "Infinity", "-Infinity",
            ])
            #expect(check.string(0, "a") == #"{a,"","NULL","with,comma","q\"b\\s","{br}",ü," blank ","\\","\"",🦊}"#)
            #expect(check.string(1, "a") == "{}")
            #expect(check.string(2, "a") == #"{""}"#)
            #expect(check.string(4, "a") == #"{x,NULL,"y z"}"#)
            #expect(check.isNull(5, "a"))
            let nulls = try connection.execute("SELECT count(*) AS n FROM \(schema).binary WHERE z IS NULL")
            #expect(nulls.int(0, "n") == Int64(rows.count))
        }
    }

    @Test func zeroRowsSendEmptyArraysOfEveryType() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t \(Self.tableColumns)")
            let (_, buffer) = try PostgresConnection.unnestInsert(into: "x", columns: Self.binaryColumns, rows: [], suffix: "")
            #expect(buffer.formats == Array(repeating: 1, count: Self.binaryColumns.count))
            // ndim 0, no flags, the element type: PostgreSQL's empty array.
            #expect(Self.parameterBytes(buffer)[1] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25])
            let result = try connection.insertColumns(into: "\(schema).t", columns: Self.binaryColumns, rows: [], suffix: "RETURNING k")
            #expect(result.affectedRows == 0 && result.rowCount == 0)
            let echoed = try connection.execute(
                PostgresStatement.insertColumns(into: "\(schema).t", columns: Self.binaryColumns, rows: [], suffix: "ON CONFLICT DO NOTHING"))
            #expect(echoed.affectedRows == 0)
        }
    }

    @Test func outOfRangeValuesAreClientErrorsWithTheServersSQLState() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).t \(Self.tableColumns)")
            func insert(_ column: PostgresColumn, _ value: PostgresValue) -> PostgresError? {
                let result = Result { () throws(PostgresError) in
                    try connection.insertColumns(into: "\(schema).t", columns: [.init("k", "integer"), column], rows: [[.int(1), .null], [.int(3), value]])
                }
                switch result {
                case .success: return nil
                case .failure(let error): return error
                }
            }
            for (type, literalType, value) in [("integer", "pg_catalog.int4", Int64(Int32.max) + 1), ("integer", "pg_catalog.int4", Int64(Int32.min) - 1),
                                               ("smallint", "pg_catalog.int2", Int64(Int16.max) + 1), ("smallint", "pg_catalog.int2", .min)] {
                let column = type == "integer" ? "i" : "s"
                let binary = insert(.init(column, type), .int(value))
                #expect(binary?.kind == .client)
                #expect(binary?.sqlState == "22003")
                #expect(binary?.message == "integer in array parameter $2 is out of range for type \(type)")
                // The literal path fails on the server with the same SQLSTATE.
                let literal = insert(.init(column, literalType), .int(value))
                #expect(literal?.kind == .server)
                #expect(literal?.sqlState == "22003")
            }
            for date in [Date(timeIntervalSinceReferenceDate: (-63_113_904_000.0).nextDown), Date(timeIntervalSinceReferenceDate: 252_423_993_600),
                         Date(timeIntervalSinceReferenceDate: .infinity), Date(timeIntervalSinceReferenceDate: .nan)] {
                let error = insert(.init("ts", "timestamptz"), .timestamp(date))
                #expect(error?.kind == .client)
                #expect(error?.sqlState == "22008")
                #expect(error?.message == "timestamp in array parameter $2 is outside years 0001–9999 or not finite")
            }
            for (column, value) in [(PostgresColumn("t", "text"), PostgresValue.text("a\u{0}b")), (.init("a", "text[]"), .textArray(["ok", "a\u{0}"])),
                                    (.init("a", "text[]"), .text("{a\u{0}}"))] {
                let error = insert(column, value)
                #expect(error?.kind == .client)
                #expect(error?.sqlState == "22021")
                #expect(error?.message == "text in array parameter $2 contains U+0000, which PostgreSQL text cannot store")
            }
            // Nothing reached the server: the session is fine and the table empty.
            #expect(try connection.execute("SELECT count(*) AS n FROM \(schema).t").int(0, "n") == 0)
        }
    }

    @Test func unknownTypesAndValuesWithoutABinaryFormGoAsTextLiterals() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE \(schema).t (k integer, j jsonb, u uuid, n numeric, v varchar(5), dt date,
                                          t text, d double precision, ts timestamptz, f boolean)
                """)
            let columns: [PostgresColumn] = [
                .init("k", "integer"), .init("j", "jsonb"), .init("u", "uuid"), .init("n", "numeric"), .init("v", "varchar(5)"),
                .init("dt", "date"), .init("t", "text"), .init("d", "double precision"), .init("ts", "timestamptz"), .init("f", "boolean"),
            ]
            let rows: [[PostgresValue]] = [
                [.int(1), .text(#"{"a": [1, "x,\"y\""]}"#), .text("8f14e45f-ceea-467a-9a36-dedd4bea2543"), .int(42), .text("short"),
                 .text("2026-11-29"), .int(42), .int(7), .text("2026-11-29 12:00:00+00"), .text("yes")],
                [.int(2), .null, .null, .double(0.5), .text(""), .null, .text("plain"), .double(1.5), .text("Infinity"), .bool(false)],
            ]
            let (_, buffer) = try PostgresConnection.unnestInsert(into: "x", columns: columns, rows: rows, suffix: "")
            #expect(buffer.formats == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            #expect(try connection.insertColumns(into: "\(schema).t", columns: columns, rows: rows).affectedRows == 2)
            let check = try connection.execute("""
                SELECT j::text AS j, u::text AS u, n::text AS n, v, dt::text AS dt, t, d::text AS d,
                       extract(epoch FROM ts)::text AS ts, f::text AS f FROM \(schema).t ORDER BY k
                """)
            #expect(check.string(0, "j") == #"{"a": [1, "x,\"y\""]}"#)
            #expect(check.string(0, "u") == "8f14e45f-ceea-467a-9a36-dedd4bea2543")
            #expect(check.string(0, "n") == "42" && check.string(1, "n") == "0.5")
            #expect(check.string(0, "v") == "short" && check.string(1, "v") == "")
            #expect(check.string(0, "dt") == "2026-11-29")
            #expect(check.string(0, "t") == "42")
            #expect(check.string(0, "d") == "7" && check.string(1, "d") == "1.5")
            #expect(check.string(0, "ts") == "1795953600.000000" && check.string(1, "ts") == "Infinity")
            #expect(check.string(0, "f") == "true" && check.string(1, "f") == "false")
        }
    }

    /// Each parameter's bytes as libpq is handed them.
    static func parameterBytes(_ buffer: ParameterBuffer) -> [[UInt8]] {
        buffer.withUnsafeArguments { _, values, lengths, _ in
            (0..<buffer.count).map { index in
                guard let value = values![index] else { return [] }
                let count = Int(lengths![index])
                return value.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
            }
        }
    }

    /// `json` columns go as binary `json[]` (its elements' binary form is
    /// their text) and store what the same text stores; text that is not
    /// JSON is refused by the server (22P02), so nothing unchecked goes in.
    @Test func jsonColumnsTravelAsBinaryAndAreChecked() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).j (k integer, v json)")
            let values: [PostgresValue] = [.text(#"[{"a":"quote\" ü 🪪","b":[1,2.5,null,true]}]"#), .null, .text("{}")]
            let rows = values.enumerated().map { [PostgresValue.int(Int64($0)), $1] }
            let columns = [PostgresColumn("k", "integer"), PostgresColumn("v", "json")]
            let (_, buffer) = try PostgresConnection.unnestInsert(into: "x", columns: columns, rows: rows, suffix: "")
            #expect(buffer.formats == [1, 1] && buffer.types == [1007, 199])
            try connection.insertColumns(into: "\(schema).j", columns: columns, rows: rows)
            let read = try connection.execute("SELECT v::text AS v, (v::jsonb = $1::jsonb) AS same FROM \(schema).j ORDER BY k", [values[0]])
            #expect(read.string(0, "v") == (try #require({ if case .text(let text) = values[0] { text } else { nil } }())))
            #expect(read.bool(0, "same") == true && read.isNull(1, "v") && read.string(2, "v") == "{}")
            let refused = #expect(throws: PostgresError.self) {
                try connection.insertColumns(into: "\(schema).j", columns: columns, rows: [[.int(9), .text("{not json")]])
            }
            #expect(refused?.sqlState == "22P02")
        }
    }
}
