import CLibPQ
import Foundation
import Synchronization

/// One column of `insertColumns`: its name and its SQL type as the table
/// declares it (`text`, `boolean`, `integer`, `bigint`, `double precision`,
/// `timestamptz`, `bytea`, `text[]`, …).
public struct PostgresColumn: Sendable, Hashable {
    public let name: String
    public let type: String

    public init(_ name: String, _ type: String) {
        self.name = name
        self.type = type
    }
}

extension PostgresConnection {
    /// Inserts many rows as one array parameter per column:
    /// `INSERT INTO table (a, b) SELECT unnest($1::text[]), unnest($2::boolean[]) suffix`.
    ///
    /// The statement text and its parameter count do not grow with the rows,
    /// so the server parses and plans a few hundred bytes instead of a VALUES
    /// list with a parameter per value (parsing, binding and setting up such a
    /// list is a large part of a big insert), and there is no
    /// 65,535-parameter limit to chunk around.
    ///
    /// Columns of the types `ArrayElement` knows travel as binary arrays, read
    /// by the element type's receive function; parsing text array literals
    /// (`array_in` and an input function per element) would be a large share
    /// of the server's CPU under load. Any other column, or one holding a value its
    /// binary form cannot carry (`.int` into `text`), goes as a text array
    /// literal read with the same input functions as a separate parameter.
    ///
    /// - `table` is SQL, not data (as for `insertRows`); column names are quoted here;
    ///   column types are SQL, spelled as in the table (they become casts).
    /// - `suffix` follows the statement, e.g. `ON CONFLICT DO NOTHING RETURNING id`.
    ///
    /// Returns the result (`affectedRows`, and rows of a RETURNING suffix).
    /// `.textArray` values only into array columns.
    @discardableResult
    public func insertColumns(into table: String, columns: [PostgresColumn], rows: [[PostgresValue]], suffix: String = "") throws(PostgresError) -> PostgresResult {
        try execute(try PostgresStatement.insertColumns(into: table, columns: columns, rows: rows, suffix: suffix))
    }

    /// The statement and its parameters (one array per column), for `insertColumns`.
    static func unnestInsert(into table: String, columns: [PostgresColumn], rows: [[PostgresValue]], suffix: String) throws(PostgresError) -> (String, ParameterBuffer) {
        let shape = try InsertShape.of(table: table, columns: columns, suffix: suffix)
        for (index, row) in rows.enumerated() where row.count != columns.count {
            throw .client("insertColumns row \(index) has \(row.count) values for \(columns.count) columns")
        }
        // Which columns can go in binary, and about how many bytes all of them take,
        // so the values land in one allocation.
        var elements: [ArrayElement?] = []
        var capacity = 0
        for column in columns.indices {
            var element = shape.elements[column]
            var size = 20
            for row in rows {
                let value = row[column]
                if let known = element, !known.carries(value) { element = nil }
                size += ArrayElement.sizeHint(value)
            }
            elements.append(element)
            capacity += size + 1
        }
        var buffer = ParameterBuffer(parameters: columns.count, capacity: capacity)
        for (column, element) in elements.enumerated() {
            let number = column + 1
            if let element {
                try buffer.appendEncoded(type: element.arrayOID, binary: true, number: number) { out throws(PostgresError) in
                    try element.appendArray(rows, column: column, to: &out, number: number)
                }
            } else {
                // Type OID 0 ("unknown"), as a `.text` parameter: the cast in the statement decides the type.
                try buffer.appendEncoded(type: 0, binary: false, number: number) { out throws(PostgresError) in
                    out.append(UInt8(ascii: "{"))
                    for (index, row) in rows.enumerated() {
                        if index > 0 { out.append(UInt8(ascii: ",")) }
                        try ArrayLiteral.append(row[column], to: &out, number: number)
                    }
                    out.append(UInt8(ascii: "}"))
                }
            }
        }
        return (shape.sql, buffer)
    }
}

/// What an `insertColumns` statement is apart from its rows: its SQL text and
/// each column's binary element type. The persister writes the same handful
/// of shapes every batch; building them anew (type names parsed, identifiers
/// quoted, text joined) would be a noticeable part of its thread's time at
/// small batches.
struct InsertShape: Sendable {
    let sql: String
    /// The element type each column's declared type names (nil: sent as text).
    let elements: [ArrayElement?]

    private struct Key: Hashable {
        let table: String
        let columns: [PostgresColumn]
        let suffix: String
    }

    /// Shapes already built, process-wide; past `cacheLimit` new ones are built
    /// per call (callers with generated table names cannot grow it for ever).
    private static let cache = Mutex<[Key: InsertShape]>([:])
    static let cacheLimit = 64

    static func of(table: String, columns: [PostgresColumn], suffix: String) throws(PostgresError) -> InsertShape {
        let key = Key(table: table, columns: columns, suffix: suffix)
        if let shape = cache.withLock({ $0[key] }) { return shape }
        let shape = try InsertShape(table: table, columns: columns, suffix: suffix)
        cache.withLock { shapes in
            if shapes.count < cacheLimit { shapes[key] = shape }
        }
        return shape
    }

    /// An array-typed column travels as text[] of its elements' literals and is
    /// cast per row; any other as an array of its own type.
    private init(table: String, columns: [PostgresColumn], suffix: String) throws(PostgresError) {
        guard !columns.isEmpty else { throw .client("insertColumns needs at least one column") }
        guard columns.count <= ParameterBuffer.maximumCount else {
            throw .client("insertColumns with \(columns.count) columns exceeds the \(ParameterBuffer.maximumCount)-parameter limit", sqlState: "54023")
        }
        for column in columns where column.name.utf8.contains(0) || column.type.utf8.contains(0) {
            throw .client("a column name or type contains U+0000")
        }
        elements = columns.map { ArrayElement(sqlType: $0.type) }
        // One unnest per column in the select list, which PostgreSQL runs in
        // step (ProjectSet), rather than one unnest of every array in FROM,
        // which it materialises into a tuplestore first and then reads back:
        // less server time for every batch.
        var selected: [String] = []
        for (index, column) in columns.enumerated() {
            let isArray = ArrayElement.isArrayType(column.type)
            let unnest = "unnest($\(index + 1)::" + (isArray ? "text[]" : column.type + "[]") + ")"
            selected.append(isArray ? "CAST(\(unnest) AS \(column.type))" : unnest)
        }
        sql = "INSERT INTO \(table) (" + columns.map { PostgresConnection.quoteIdentifier($0.name) }.joined(separator: ", ") + ") SELECT "
            + selected.joined(separator: ", ") + (suffix.isEmpty ? "" : " " + suffix)
    }
}

/// An element type whose one-dimensional arrays `insertColumns` sends in
/// binary format (`array_send`'s layout, read by `array_recv`), with its type
/// OIDs from pg_type.dat (stable across PostgreSQL versions).
enum ArrayElement: Equatable {
    case text, bytea, bool, int2, int4, int8, float8, timestamptz
    /// `json`: its binary form is its text, which `json_recv` checks as `json_in` does.
    case json
    /// An array-typed column (`text[]`, `integer[]`, …): text[] whose elements
    /// are each row's array literal, cast to the column's type per row.
    case arrayLiteral

    /// The element type `sqlType` names in one of PostgreSQL's usual spellings
    /// (any case); nil for other types, which then travel as text literals.
    init?(sqlType: String) {
        if Self.isArrayType(sqlType) { self = .arrayLiteral; return }
        let words = sqlType.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).joined(separator: " ")
        switch words {
        case "text": self = .text
        case "json": self = .json
        case "bytea": self = .bytea
        case "boolean", "bool": self = .bool
        case "smallint", "int2": self = .int2
        case "integer", "int", "int4": self = .int4
        case "bigint", "int8": self = .int8
        case "double precision", "float8": self = .float8
        case "timestamptz", "timestamp with time zone": self = .timestamptz
        default: return nil
        }
    }

    static func isArrayType(_ sqlType: String) -> Bool { sqlType.hasSuffix("]") }

    var elementOID: Oid {
        switch self {
        case .bool: 16
        case .bytea: 17
        case .int8: 20
        case .int2: 21
        case .int4: 23
        case .text, .arrayLiteral: 25
        case .json: 114
        case .float8: 701
        case .timestamptz: 1184
        }
    }

    var arrayOID: Oid {
        switch self {
        case .bool: 1000
        case .bytea: 1001
        case .int2: 1005
        case .int4: 1007
        case .text, .arrayLiteral: 1009
        case .json: 199
        case .int8: 1016
        case .float8: 1022
        case .timestamptz: 1185
        }
    }

    /// Whether `value` has a binary form of this type that the server would
    /// store as it stores the value's text form. Anything else (`.int` into a
    /// text or float column, a `.text` date) makes the column go as text, so
    /// the server converts it exactly as it converts any text literal.
    func carries(_ value: PostgresValue) -> Bool {
        switch (self, value) {
        case (_, .null), (.text, .text), (.json, .text), (.bytea, .bytes), (.bool, .bool), (.int2, .int), (.int4, .int), (.int8, .int),
             (.float8, .double), (.timestamptz, .timestamp), (.arrayLiteral, .text), (.arrayLiteral, .textArray):
            true
        case (.timestamptz, .text(let text)):
            // Retention's "never expires"; timestamptz's binary form has both infinities.
            text == "infinity" || text == "-infinity"
        default:
            false
        }
    }

    /// About the bytes `value` takes as an array element in either format, for reserving.
    static func sizeHint(_ value: PostgresValue) -> Int {
        switch value {
        case .null: 4
        case .text(let text): text.utf8.count + 6
        case .bytes(let bytes): bytes.count * 2 + 6
        case .int, .double: 24
        case .bool: 5
        case .timestamp: 31
        case .textArray(let elements): elements.reduce(8) { $0 + $1.utf8.count + 4 }
        }
    }

    // PostgreSQL's timestamps count microseconds from 2000-01-01T00:00:00Z.
    private static let postgresEpochMicroseconds: Int64 = 946_684_800 * 1_000_000

    /// Column `column` of `rows` as one binary array; every value is one this type `carries`.
    func appendArray(_ rows: [[PostgresValue]], column: Int, to out: inout [UInt8], number: Int) throws(PostgresError) {
        guard !rows.isEmpty else {
            // No dimensions: PostgreSQL's one empty array, whatever the element type.
            Self.int32(0, &out); Self.int32(0, &out); Self.uint32(elementOID, &out)
            return
        }
        guard rows.count <= Int(Int32.max) else { throw .client("array parameter $\(number) has more than 2³¹ elements", sqlState: "54000") }
        let hasNull = rows.contains { row in
            if case .null = row[column] { return true }
            return false
        }
        Self.int32(1, &out); Self.int32(hasNull ? 1 : 0, &out); Self.uint32(elementOID, &out)
        Self.int32(Int32(rows.count), &out); Self.int32(1, &out)
        for row in rows {
            let value = row[column]
            if case .null = value {
                Self.int32(-1, &out)
                continue
            }
            let lengthAt = out.count
            Self.int32(0, &out)
            try appendElement(value, to: &out, number: number)
            let length = out.count - lengthAt - 4
            guard length <= Int(Int32.max) else { throw .client("an element of array parameter $\(number) is larger than 2 GiB", sqlState: "54000") }
            let bigEndian = UInt32(length).bigEndian
            withUnsafeBytes(of: bigEndian) { bytes in
                for index in 0..<4 { out[lengthAt + index] = bytes[index] }
            }
        }
    }

    /// `value`'s binary form (the element type's `*_send`), without its length.
    private func appendElement(_ value: PostgresValue, to out: inout [UInt8], number: Int) throws(PostgresError) {
        switch (self, value) {
        case (.text, .text(let text)), (.json, .text(let text)), (.arrayLiteral, .text(let text)):
            try Self.appendText(text, to: &out, number: number)
        case (.arrayLiteral, .textArray(let elements)):
            try Self.appendLiteral(elements, to: &out, number: number)
        case (.bytea, .bytes(let bytes)):
            out.append(contentsOf: bytes)
        case (.bool, .bool(let bool)):
            out.append(bool ? 1 : 0)
        case (.int2, .int(let integer)):
            guard let narrow = Int16(exactly: integer) else { throw Self.outOfRange("smallint", number) }
            Self.uint16(UInt16(bitPattern: narrow), &out)
        case (.int4, .int(let integer)):
            guard let narrow = Int32(exactly: integer) else { throw Self.outOfRange("integer", number) }
            Self.int32(narrow, &out)
        case (.int8, .int(let integer)):
            Self.uint64(UInt64(bitPattern: integer), &out)
        case (.float8, .double(let double)):
            // One NaN, as float8in makes of "NaN", whatever payload this one has.
            Self.uint64((double.isNaN ? Double.nan : double).bitPattern, &out)
        case (.timestamptz, .timestamp(let date)):
            guard let micros = TimestampText.microsecondsSince1970(date) else {
                throw .client("timestamp in array parameter $\(number) is outside years 0001–9999 or not finite", sqlState: "22008")
            }
            Self.uint64(UInt64(bitPattern: micros - Self.postgresEpochMicroseconds), &out)
        case (.timestamptz, .text(let text)):
            // timestamptz's infinities are the extreme int64 values (DT_NOBEGIN, DT_NOEND).
            Self.uint64(UInt64(bitPattern: text == "-infinity" ? .min : .max), &out)
        default:
            // `carries` let through a value this type has no binary form for: a bug here, not in the caller.
            preconditionFailure("no binary form of this value in a \(self) array")
        }
    }

    private static func outOfRange(_ type: String, _ number: Int) -> PostgresError {
        .client("integer in array parameter $\(number) is out of range for type \(type)", sqlState: "22003")
    }

    /// textrecv takes UTF-8 as it is; U+0000 it cannot store, and is refused as in text format.
    private static func appendText(_ text: String, to out: inout [UInt8], number: Int) throws(PostgresError) {
        guard NULFreeText.append(text, to: &out) else {
            throw .client("text in array parameter $\(number) contains U+0000, which PostgreSQL text cannot store", sqlState: "22021")
        }
    }

    /// `{"a","b\"c"}`, as `ParameterBuffer.arrayLiteral` spells it, written in place.
    private static func appendLiteral(_ elements: [String], to out: inout [UInt8], number: Int) throws(PostgresError) {
        out.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == 0 {
                    throw .client("text in array parameter $\(number) contains U+0000, which PostgreSQL text cannot store", sqlState: "22021")
                }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func int32(_ value: Int32, _ out: inout [UInt8]) { uint32(UInt32(bitPattern: value), &out) }

    private static func uint16(_ value: UInt16, _ out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value >> 8)); out.append(UInt8(truncatingIfNeeded: value))
    }

    private static func uint32(_ value: UInt32, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func uint64(_ value: UInt64, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }
}

/// Elements of a one-dimensional array literal (`{…,…}`), in the text forms
/// `ParameterBuffer` sends the same values in.
enum ArrayLiteral {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func append(_ value: PostgresValue, to out: inout [UInt8], number: Int) throws(PostgresError) {
        switch value {
        case .null:
            out.append(contentsOf: [UInt8(ascii: "N"), UInt8(ascii: "U"), UInt8(ascii: "L"), UInt8(ascii: "L")])
        case .text(let string):
            try quoted(string, to: &out, number: number)
        case .bytes(let data):
            // bytea's hex input form, `\x…`; the backslash is escaped inside the quotes.
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
            for byte in data {
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
            out.append(UInt8(ascii: "\""))
        case .int(let integer):
            out.append(contentsOf: String(integer).utf8)
        case .double(let double):
            let text = double.isNaN ? "NaN" : double.isInfinite ? (double < 0 ? "-Infinity" : "Infinity") : String(double)
            out.append(contentsOf: text.utf8)
        case .bool(let bool):
            out.append(bool ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case .timestamp(let date):
            out.append(UInt8(ascii: "\""))
            guard TimestampText.append(date, to: &out) else {
                throw .client("timestamp in array parameter $\(number) is outside years 0001–9999 or not finite", sqlState: "22008")
            }
            out.append(UInt8(ascii: "\""))
        case .textArray(let elements):
            // The element's own literal, quoted as one text element (cast to the array type per row).
            let inner = ParameterBuffer.arrayLiteral(elements)
            try quoted(inner, to: &out, number: number)
        }
    }

    /// `"…"` with `"` and `\` escaped: NULL, empty strings, commas, braces and blanks stay plain text.
    /// Runs without either are copied whole (outcome payloads are kilobytes of JSON).
    private static func quoted(_ text: String, to out: inout [UInt8], number: Int) throws(PostgresError) {
        var text = text
        let failed: Bool = text.withUTF8 { bytes in
            out.append(UInt8(ascii: "\""))
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0 else { continue }
                if byte == 0 { return true }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                out.append(UInt8(ascii: "\\"))
                start = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
            out.append(UInt8(ascii: "\""))
            return false
        }
        if failed {
            throw .client("text in array parameter $\(number) contains U+0000, which PostgreSQL text cannot store", sqlState: "22021")
        }
    }
}
