/// Rows for `insertColumns`, held the way the statement sends them: one array
/// literal per column. Encoding the values is most of the work of building a
/// large insert, so rows can be encoded where they are made (on the threads
/// that produce them) and only concatenated on the thread that sends them.
public struct PostgresColumnValues: Sendable {
    public let columnCount: Int
    public private(set) var rowCount = 0
    /// Each column's array elements, comma-separated, without the braces.
    private var columns: [[UInt8]]

    public init(columns: Int) {
        columnCount = columns
        self.columns = Array(repeating: [], count: columns)
    }

    public init(columns: Int, rows: [[PostgresValue]]) throws(PostgresError) {
        self.init(columns: columns)
        for row in rows { try append(row) }
    }

    /// Adds one row; a row that cannot be encoded is refused whole (nothing of it is kept).
    public mutating func append(_ row: [PostgresValue]) throws(PostgresError) {
        guard row.count == columnCount else {
            throw .client("insertColumns row \(rowCount) has \(row.count) values for \(columnCount) columns")
        }
        let lengths = columns.map(\.count)
        do {
            for (column, value) in row.enumerated() {
                if rowCount > 0 { columns[column].append(UInt8(ascii: ",")) }
                try ArrayLiteral.append(value, to: &columns[column], number: column + 1)
            }
        } catch {
            for column in columns.indices { columns[column].removeSubrange(lengths[column]...) }
            throw error
        }
        rowCount += 1
    }

    /// Adds `other`'s rows after these; both must have the same number of columns.
    public mutating func append(contentsOf other: PostgresColumnValues) throws(PostgresError) {
        guard other.columnCount == columnCount else {
            throw .client("insertColumns rows of \(other.columnCount) columns appended to rows of \(columnCount)")
        }
        guard other.rowCount > 0 else { return }
        for column in columns.indices {
            if rowCount > 0 { columns[column].append(UInt8(ascii: ",")) }
            columns[column].append(contentsOf: other.columns[column])
        }
        rowCount += other.rowCount
    }

    /// One `{…}` array literal per column, as text parameters.
    var parameters: [PostgresValue] {
        columns.map { elements in
            var literal = [UInt8]()
            literal.reserveCapacity(elements.count + 2)
            literal.append(UInt8(ascii: "{"))
            literal.append(contentsOf: elements)
            literal.append(UInt8(ascii: "}"))
            return .text(String(decoding: literal, as: UTF8.self))
        }
    }
}
