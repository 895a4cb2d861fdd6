import Foundation
@testable import Postgres
import Testing

/// The pure-Swift encoders and decoders; no server needed.
struct CodecTests {
    @Test func storableTextReplacesOnlyNUL() throws {
        #expect(PostgresValue.storable("plain ü 🙂") == "plain ü 🙂")
        #expect(PostgresValue.storable("a\u{0}b\u{0}") == "a\u{FFFD}b\u{FFFD}")
        #expect(PostgresValue.storable("\u{0}") == "\u{FFFD}")
        #expect(!PostgresValue.storable("x\u{0}\u{0}é").utf8.contains(0))
        // What storable returns, the array encoder accepts.
        var out: [UInt8] = []
        try ArrayLiteral.append(.text(PostgresValue.storable("a\u{0}b")), to: &out, number: 1)
        #expect(String(decoding: out, as: UTF8.self) == "\"a\u{FFFD}b\"")
    }

    @Test func timestampsFormatAsRFC3339UTCWithMicroseconds() {
        #expect(TimestampText.format(Date(timeIntervalSince1970: 1_795_956_704.123456)) == "2026-11-29T12:51:44.123456Z")
        #expect(TimestampText.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
        #expect(TimestampText.format(Date(timeIntervalSince1970: -0.000001)) == "1969-12-31T23:59:59.999999Z")
        #expect(TimestampText.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000000Z")
        #expect(TimestampText.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00.000000Z")
        // Foundation's distantPast is 0001-01-01 *Julian*, i.e. 0000-12-30 proleptic Gregorian: out of range.
        #expect(TimestampText.format(.distantPast) == nil)
        #expect(TimestampText.format(Date(timeIntervalSince1970: 400_000_000_000)) == nil)
        #expect(TimestampText.format(Date(timeIntervalSinceReferenceDate: .nan)) == nil)
    }

    @Test func timestampsParseEveryISOOffsetForm() {
        func parse(_ text: String) -> Date? { TimestampText.parse(Array(text.utf8)) }
        let instant = Date(timeIntervalSince1970: 1_795_956_704.123456)
        #expect(parse("2026-11-29 12:51:44.123456+00") == instant)
        #expect(parse("2026-11-29 18:21:44.123456+05:30") == instant)
        #expect(parse("2026-11-29 09:21:44.123456-03:30") == instant)
        #expect(parse("2026-11-29T12:51:44.123456Z") == instant)
        #expect(abs(parse("2026-11-29 12:51:44.12+00")!.timeIntervalSince1970 - 1_795_956_704.12) < 0.000_000_5)
        #expect(parse("1871-04-30 23:15:30-00:44:30") == Date(timeIntervalSince1970: -3_113_769_600))
        #expect(parse("2026-11-29") == Date(timeIntervalSince1970: 1_795_910_400))
        #expect(parse("0001-01-01 00:00:00+00") == Date(timeIntervalSince1970: -62_135_596_800))
        #expect(parse("0001-01-01 00:00:00+00 BC") == Date(timeIntervalSince1970: -62_135_596_800 - 366 * 86_400))
        #expect(parse("infinity") == nil)
        #expect(parse("2026-13-01 00:00:00+00") == nil)
        #expect(parse("2026-11-29 12:51:44+00 trailing") == nil)
    }

    @Test func byteaDecodesHexAndEscapeOutput() {
        func decode(_ text: String) -> [UInt8]? { ByteaText.decode(ArraySlice(text.utf8)) }
        #expect(decode(#"\x00ff10Ab"#) == [0, 255, 16, 171])
        #expect(decode(#"\x"#) == [])
        #expect(decode(#"\x0"#) == nil)
        #expect(decode(#"a\\b\000\377"#) == [97, 92, 98, 0, 255])
        #expect(decode(#"\9"#) == nil)
    }

    @Test func textArraysQuoteEveryElement() {
        #expect(ParameterBuffer.arrayLiteral([]) == "{}")
        #expect(ParameterBuffer.arrayLiteral(["a", "", "NULL", #"q"b\s"#]) == #"{"a","","NULL","q\"b\\s"}"#)
    }

    @Test func identifiersAreQuotedLikePQescapeIdentifier() {
        #expect(PostgresConnection.quoteIdentifier("events") == #""events""#)
        #expect(PostgresConnection.quoteIdentifier(#"we"ird"#) == #""we""ird""#)
        #expect(PostgresConnection.quoteIdentifier("Ünï code") == #""Ünï code""#)
    }

    @Test func quotedValuesAreRedacted() {
        #expect(PostgresError.redactQuoted(#"invalid input syntax for type uuid: "secret""#)
                == #"invalid input syntax for type uuid: "…""#)
        #expect(PostgresError.redactQuoted(#"unterminated "sec"#) == #"unterminated "…"#)
    }

    @Test func transienceFollowsTheBrief() {
        for state in ["57P01", "57P02", "57P03", "40001", "40P01", "53300", "55P03", "57014", "08006", "08001"] {
            #expect(PostgresError(kind: .server, sqlState: state, message: "m").isTransient, "\(state)")
        }
        for state in ["42601", "23505", "22P02", "25P02", "53100"] {
            #expect(!PostgresError(kind: .server, sqlState: state, message: "m").isTransient, "\(state)")
        }
        #expect(PostgresError(kind: .connection, message: "lost").isTransient)
        #expect(!PostgresError(kind: .client, message: "misuse").isTransient)
    }

    @Test func storableTimestampsAreThoseOfYears1To9999() throws {
        // Proleptic Gregorian, as PostgreSQL counts: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
        let first = Date(timeIntervalSince1970: -62_135_596_800)
        let last = Date(timeIntervalSince1970: 253_402_300_799)
        #expect(PostgresValue.storableTimestamp(first) == .timestamp(first))
        #expect(PostgresValue.storableTimestamp(last) == .timestamp(last))
        #expect(PostgresValue.storableTimestamp(first.addingTimeInterval(-1)) == .null)
        #expect(PostgresValue.storableTimestamp(last.addingTimeInterval(1)) == .null)
        #expect(PostgresValue.storableTimestamp(nil) == .null)
        #expect(PostgresValue.storableTimestamp(Date(timeIntervalSinceReferenceDate: .infinity)) == .null)
    }

    @Test func valuesListNumbersPlaceholdersRowByRow() {
        #expect(PostgresConnection.valuesList(rows: 2, columns: 3) == "($1,$2,$3),($4,$5,$6)")
    }

    /// A statement's shape is built once and reused: the same text for the same
    /// table, columns and suffix, whatever the rows; another suffix or column set
    /// is another statement; past the cache's limit shapes are still right, only
    /// built per call; and a shape the columns cannot make is refused every time.
    @Test func insertShapesAreReusedAndStayExact() throws {
        let columns: [PostgresColumn] = [.init("id", "text"), .init("n", "integer"), .init("tags", "text[]")]
        let expected = #"INSERT INTO t ("id", "n", "tags") SELECT unnest($1::text[]), unnest($2::integer[]), CAST(unnest($3::text[]) AS text[]) ON CONFLICT DO NOTHING"#
        let (first, _) = try PostgresConnection.unnestInsert(into: "t", columns: columns, rows: [[.text("a"), .int(1), .textArray([])]], suffix: "ON CONFLICT DO NOTHING")
        let (again, binary) = try PostgresConnection.unnestInsert(into: "t", columns: columns, rows: [[.text("b"), .text("2"), .null]], suffix: "ON CONFLICT DO NOTHING")
        #expect(first == expected && again == expected)
        #expect(binary.types == [1009, 0, 1009], "a value the cached binary type cannot carry still sends its column as text")
        let (plain, _) = try PostgresConnection.unnestInsert(into: "t", columns: columns, rows: [], suffix: "")
        #expect(plain == String(expected.dropLast(" ON CONFLICT DO NOTHING".count)))
        for index in 0..<(InsertShape.cacheLimit + 5) {
            let (sql, _) = try PostgresConnection.unnestInsert(into: "t\(index)", columns: [.init("x", "bigint")], rows: [[.int(1)]], suffix: "")
            #expect(sql == #"INSERT INTO t\#(index) ("x") SELECT unnest($1::bigint[])"#)
        }
        for _ in 0..<2 {
            #expect(throws: PostgresError.self) { try PostgresConnection.unnestInsert(into: "t", columns: [.init("x\u{0}", "text")], rows: [], suffix: "") }
            #expect(throws: PostgresError.self) { try PostgresConnection.unnestInsert(into: "t", columns: [], rows: [], suffix: "") }
        }
    }

    /// `insertColumns`'s binary arrays, byte for byte (the server reads them in InsertColumnsBinaryTests).
    @Test func arraysHaveTheLayoutArrayRecvReads() throws {
        let (_, buffer) = try PostgresConnection.unnestInsert(
            into: "x", columns: [.init("i", "integer"), .init("t", "TEXT"), .init("ts", "timestamp  with time zone")],
            rows: [[.int(1), .text("é"), .timestamp(Date(timeIntervalSince1970: 946_684_800.000_001))], [.null, .text(""), .text("infinity")]],
            suffix: "")
        let bytes = InsertColumnsBinaryTests.parameterBytes(buffer)
        let header: (UInt8, UInt8) -> [UInt8] = { flags, oid in [0, 0, 0, 1, 0, 0, 0, flags, 0, 0, 0, oid, 0, 0, 0, 2, 0, 0, 0, 1] }
        #expect(bytes[0] == header(1, 23) + [0, 0, 0, 4, 0, 0, 0, 1] + [0xff, 0xff, 0xff, 0xff])
        #expect(bytes[1] == header(0, 25) + [0, 0, 0, 2, 0xc3, 0xa9] + [0, 0, 0, 0])
        #expect(bytes[2] == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x04, 0xa0, 0, 0, 0, 2, 0, 0, 0, 1]
                + [0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 8, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        #expect(buffer.types == [1007, 1009, 1185])
    }
}
