import Foundation

/// One column of `insertColumns`: its name and its SQL type as the table
/// declares it (`text`, `boolean`, `integer`, `bigint`, `double precision`,
/// `timestamptz`, `bytea`, `text[]`, …).
public struct PostgresColumn: Sendable, Equatable {
    public let name: String
    public let type: String

    public init(_ name: String, _ type: String) {
        self.name = name
        self.type = type
    }
}

extension PostgresConnection {
    /// Inserts many rows as one array parameter per column:
    /// `INSERT INTO table (a, b) SELECT * FROM unnest($1::text[], $2::boolean[]) AS u suffix`.
    ///
    /// The statement text and its parameter count do not grow with the rows,
    /// so the server parses and plans a few hundred bytes instead of a VALUES
    /// list with a parameter per value (for 7,000 rows × 9 columns that
    /// parsing, binding and setting up was more than a third of the insert),
    /// and there is no 65,535-parameter limit to chunk around. The values are
    /// read with the same input functions as separate parameters.
    ///
    /// - `table` is SQL, not data (as for `insertRows`); column names are quoted here;
    ///   column types are SQL, spelled as in the table (they become casts).
    /// - `suffix` follows the statement, e.g. `ON CONFLICT DO NOTHING RETURNING id`.
    ///
    /// Returns the result (`affectedRows`, and rows of a RETURNING suffix).
    /// `.bytes` values travel hex-encoded; `.textArray` values only into array columns.
    @discardableResult
    public func insertColumns(into table: String, columns: [PostgresColumn], rows: [[PostgresValue]], suffix: String = "") throws(PostgresError) -> PostgresResult {
        try execute(try PostgresStatement.insertColumns(into: table, columns: columns, rows: rows, suffix: suffix))
    }

    /// The statement and its parameters (one array literal per column), for `insertColumns`.
    static func unnestInsert(into table: String, columns: [PostgresColumn], rows: [[PostgresValue]], suffix: String) throws(PostgresError) -> (String, [PostgresValue]) {
        guard !columns.isEmpty else { throw .client("insertColumns needs at least one column") }
        for column in columns where column.name.utf8.contains(0) || column.type.utf8.contains(0) {
            throw .client("a column name or type contains U+0000")
        }
        for (index, row) in rows.enumerated() where row.count != columns.count {
            throw .client("insertColumns row \(index) has \(row.count) values for \(columns.count) columns")
        }
        var literals: [[UInt8]] = Array(repeating: [UInt8(ascii: "{")], count: columns.count)
        for (rowIndex, row) in rows.enumerated() {
            for (column, value) in row.enumerated() {
                if rowIndex > 0 { literals[column].append(UInt8(ascii: ",")) }
                try ArrayLiteral.append(value, to: &literals[column], number: column + 1)
            }
        }
        // An array-typed column travels as text[] of its elements' literals and is cast per row;
        // any other as an array of its own type, read by that type's input function.
        var selected: [String] = []
        var arrays: [String] = []
        for (index, column) in columns.enumerated() {
            let isArray = column.type.hasSuffix("]")
            arrays.append("$\(index + 1)::" + (isArray ? "text[]" : column.type + "[]"))
            selected.append(isArray ? "CAST(u.c\(index + 1) AS \(column.type))" : "u.c\(index + 1)")
        }
        let sql = "INSERT INTO \(table) (" + columns.map { Self.quoteIdentifier($0.name) }.joined(separator: ", ") + ") SELECT "
            + selected.joined(separator: ", ") + " FROM unnest(" + arrays.joined(separator: ", ") + ") AS u("
            + (1...columns.count).map { "c\($0)" }.joined(separator: ", ") + ")" + (suffix.isEmpty ? "" : " " + suffix)
        let parameters = literals.map { literal -> PostgresValue in
            var literal = literal
            literal.append(UInt8(ascii: "}"))
            return .text(String(decoding: literal, as: UTF8.self))
        }
        return (sql, parameters)
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
