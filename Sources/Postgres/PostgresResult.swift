import CLibPQ
import Foundation

/// The rows of one statement, copied out of libpq's `PGresult` (which is freed
/// before this is returned), so the value is plain data: Sendable, no C memory.
///
/// Values are PostgreSQL's text format. Cells live in one byte buffer with
/// per-cell start and length, so a large result costs three allocations, not
/// one per cell. Asking for a column name the statement did not return is a
/// programming error and traps, the way an array index out of range does, so a
/// typo cannot pass for SQL NULL.
public struct PostgresResult: Sendable {
    public let rowCount: Int
    public let columnNames: [String]
    /// Rows inserted, updated, deleted, selected…: the number in the command tag, 0 if it has none.
    public let affectedRows: Int
    /// The command tag, e.g. "INSERT 0 5", "COMMIT", or "ROLLBACK" for a COMMIT of a failed transaction.
    public let commandTag: String

    private let cells: [UInt8]
    private let starts: [Int]
    /// -1 marks SQL NULL.
    private let lengths: [Int32]
    private let columnIndices: [String: Int]

    init(_ result: OpaquePointer) {
        let rows = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        var names: [String] = []
        var indices: [String: Int] = [:]
        for column in 0..<columns {
            let name = PQfname(result, Int32(column)).map { String(cString: $0) } ?? ""
            names.append(name)
            // The first of duplicate names wins, as in most drivers.
            if indices[name] == nil { indices[name] = column }
        }
        var cells: [UInt8] = []
        var starts: [Int] = []
        var lengths: [Int32] = []
        starts.reserveCapacity(rows * columns)
        lengths.reserveCapacity(rows * columns)
        for row in 0..<rows {
            for column in 0..<columns {
                starts.append(cells.count)
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    lengths.append(-1)
                    continue
                }
                let length = PQgetlength(result, Int32(row), Int32(column))
                if let value = PQgetvalue(result, Int32(row), Int32(column)), length > 0 {
                    value.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                        cells.append(contentsOf: UnsafeBufferPointer(start: $0, count: Int(length)))
                    }
                }
                lengths.append(length)
            }
        }
        self.rowCount = rows
        self.columnNames = names
        self.commandTag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        self.affectedRows = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        self.cells = cells
        self.starts = starts
        self.lengths = lengths
        self.columnIndices = indices
    }

    public func isNull(_ row: Int, _ column: String) -> Bool { raw(row, index(of: column)) == nil }

    public func string(_ row: Int, _ column: String) -> String? { string(row, index: index(of: column)) }

    public func int(_ row: Int, _ column: String) -> Int64? {
        string(row, index: index(of: column)).flatMap { Int64($0) }
    }

    public func double(_ row: Int, _ column: String) -> Double? {
        guard let text = string(row, index: index(of: column)) else { return nil }
        switch text {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(text)
        }
    }

    /// bytea in either output format (`bytea_output` hex, the default, or escape).
    public func bytes(_ row: Int, _ column: String) -> [UInt8]? {
        raw(row, index(of: column)).flatMap(ByteaText.decode)
    }

    public func bool(_ row: Int, _ column: String) -> Bool? {
        guard let cell = raw(row, index(of: column)), cell.count == 1 else { return nil }
        switch cell.first {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: return nil
        }
    }

    /// timestamptz (also timestamp and date, read as UTC); nil for NULL and ±infinity.
    public func date(_ row: Int, _ column: String) -> Date? {
        raw(row, index(of: column)).flatMap { TimestampText.parse($0) }
    }

    // MARK: - By position

    public func string(_ row: Int, index column: Int) -> String? {
        raw(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    private func index(of column: String) -> Int {
        guard let index = columnIndices[column] else {
            preconditionFailure("no column \"\(column)\" in this result; columns: \(columnNames)")
        }
        return index
    }

    private func raw(_ row: Int, _ column: Int) -> ArraySlice<UInt8>? {
        precondition(row >= 0 && row < rowCount, "row \(row) out of range 0..<\(rowCount)")
        precondition(column >= 0 && column < columnNames.count, "column \(column) out of range 0..<\(columnNames.count)")
        let cell = row * columnNames.count + column
        let length = Int(lengths[cell])
        guard length >= 0 else { return nil }
        return cells[starts[cell]..<starts[cell] + length]
    }
}
