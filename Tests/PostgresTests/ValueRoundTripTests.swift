import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipMessage))
struct ValueRoundTripTests {
    static let awkwardText = "it's \"quoted\" \\back\\slash\t tab\nnewline ünïcödé 🦊 日本語 Ω"

    @Test func everyTypeRoundTripsThroughATable() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE \(schema).v (
                    k int PRIMARY KEY, t text, b bytea, i bigint, d double precision,
                    f boolean, ts timestamptz, a text[], n text)
                """)
            let allBytes = (0...255).map { UInt8($0) } + [0, 0, 0]
            let micros = Date(timeIntervalSinceReferenceDate: 817_000_000.123456)
            let rows: [(Int64, [PostgresValue])] = [
                (1, [.text(Self.awkwardText), .bytes(allBytes), .int(.max), .double(3.141592653589793),
                     .bool(true), .timestamp(micros), .textArray(["a", "", "NULL", "with,comma", "q\"b\\s", "{br}", "ü"]), .null]),
                (2, [.text(""), .bytes([]), .int(.min), .double(-1e-300),
                     .bool(false), .timestamp(Date(timeIntervalSince1970: -2_208_988_800.5)), .textArray([]), .text("x")]),
                (3, [.null, .bytes([0]), .int(0), .double(.infinity), .null, .null, .null, .null]),
            ]
            for (key, values) in rows {
                try connection.execute("INSERT INTO \(schema).v VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", [.int(key)] + values)
            }
            let result = try connection.execute("SELECT * FROM \(schema).v ORDER BY k")
            #expect(result.rowCount == 3)
            #expect(result.columnNames == ["k", "t", "b", "i", "d", "f", "ts", "a", "n"])

            #expect(result.string(0, "t") == Self.awkwardText)
            #expect(result.bytes(0, "b") == allBytes)
            #expect(result.int(0, "i") == .max)
            #expect(result.double(0, "d") == 3.141592653589793)
            #expect(result.bool(0, "f") == true)
            #expect(abs(result.date(0, "ts")!.timeIntervalSince(micros)) < 0.000_000_5)
            #expect(result.string(0, "a") == #"{a,"","NULL","with,comma","q\"b\\s","{br}",ü}"#)
            #expect(result.string(0, "n") == nil)
            #expect(result.isNull(0, "n"))

            #expect(result.string(1, "t") == "")
            #expect(result.isNull(1, "t") == false)
            #expect(result.bytes(1, "b") == [])
            #expect(result.int(1, "i") == .min)
            #expect(result.double(1, "d") == -1e-300)
            #expect(result.bool(1, "f") == false)
            #expect(result.date(1, "ts") == Date(timeIntervalSince1970: -2_208_988_800.5))
            #expect(result.string(1, "a") == "{}")

            #expect(result.string(2, "t") == nil)
            #expect(result.bytes(2, "b") == [0])
            #expect(result.int(2, "i") == 0)
            #expect(result.double(2, "d") == .infinity)
            #expect(result.bool(2, "f") == nil)
            #expect(result.date(2, "ts") == nil)
        }
    }

    @Test func textArrayElementsArriveIntact() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let elements = ["a", "", "NULL", "with,comma", "q\"b\\s", "{br}", Self.awkwardText]
        let result = try connection.execute(
            "SELECT e, n FROM unnest($1::text[]) WITH ORDINALITY AS u(e, n) ORDER BY n", [.textArray(elements)])
        #expect((0..<result.rowCount).map { result.string($0, "e") } == elements)
    }

    @Test func parametersCarryTheirTypesWithoutCasts() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        let result = try connection.execute(
            "SELECT pg_typeof($1)::text AS i, pg_typeof($2)::text AS d, pg_typeof($3)::text AS f, pg_typeof($4)::text AS b, pg_typeof($5)::text AS ts, pg_typeof($6)::text AS a, $1 + 1 AS next",
            [.int(41), .double(0.5), .bool(true), .bytes([1]), .timestamp(Date()), .textArray(["x"])])
        #expect(result.string(0, "i") == "bigint")
        #expect(result.string(0, "d") == "double precision")
        #expect(result.string(0, "f") == "boolean")
        #expect(result.string(0, "b") == "bytea")
        #expect(result.string(0, "ts") == "timestamp with time zone")
        #expect(result.string(0, "a") == "text[]")
        #expect(result.int(0, "next") == 42)
    }

    @Test func textFillsTypedColumnsByInference() throws {
        try TestServer.withScratchSchema { connection, schema in
            try connection.executeScript("CREATE TABLE \(schema).u (id uuid PRIMARY KEY, doc jsonb, n smallint)")
            try connection.execute("INSERT INTO \(schema).u VALUES ($1, $2, $3)",
                                   [.text("0b4b5b9e-6f7a-4c1d-9a53-2c1e7d0f9a11"), .text(#"{"k": [1, 2]}"#), .int(7)])
            let result = try connection.execute("SELECT id, doc->'k'->>1 AS second, n FROM \(schema).u")
            #expect(result.string(0, "id") == "0b4b5b9e-6f7a-4c1d-9a53-2c1e7d0f9a11")
            #expect(result.string(0, "second") == "2")
            #expect(result.int(0, "n") == 7)
        }
    }

    @Test func timestampsAreSentAsUTCMicrosecondsAndReadInAnySessionTimeZone() throws {
        let connection = try TestServer.connect()
        defer { connection.close() }
        // 2026-11-29T12:51:44.123456Z built from whole microseconds.
        let instant = Date(timeIntervalSince1970: 1_795_956_704.123456)
        try connection.execute("SET TimeZone TO 'UTC'")
        let utc = try connection.execute("SELECT $1::text AS text, $1 AS ts", [.timestamp(instant)])
        #expect(utc.string(0, "text") == "2026-11-29 12:51:44.123456+00")
        #expect(abs(utc.date(0, "ts")!.timeIntervalSince(instant)) < 0.000_000_5)

        for zone in ["Asia/Kolkata", "America/St_Johns", "Pacific/Kiritimati", "Africa/Monrovia"] {
            try connection.execute("SELECT set_config('TimeZone', $1, false)", [.text(zone)])
            let local = try connection.execute("SELECT $1 AS ts, '1871-05-01 00:00:00+00'::timestamptz AS old", [.timestamp(instant)])
            #expect(abs(local.date(0, "ts")!.timeIntervalSince(instant)) < 0.000_000_5, "\(zone)")
            // Before 1972 zones had offsets with seconds (Monrovia −00:44:30), printed as ±HH:MM:SS.
            #expect(local.date(0, "old") == Date(timeIntervalSince1970: -3_113_769_600), "\(zone)")
        }
    }
}
