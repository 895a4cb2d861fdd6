import CLibPQ
import Foundation

/// Statement parameters laid out the way `PQexecParams` wants them: one byte
/// buffer holding every value (NUL-terminated, so text values are C strings),
/// plus per-parameter type OIDs, lengths and formats.
///
/// One allocation for the values instead of one per parameter matters for
/// `insertRows`, which sends up to 65,535 parameters per statement.
struct ParameterBuffer {
    /// The protocol counts parameters in a 16-bit field.
    static let maximumCount = 65_535

    private(set) var types: [Oid] = []
    private(set) var lengths: [Int32] = []
    private(set) var formats: [Int32] = []
    /// Start of each value in `bytes`, or nil for SQL NULL.
    private var starts: [Int?] = []
    private var bytes: [UInt8] = []

    var count: Int { types.count }

    // Type OIDs from pg_type.dat; stable across PostgreSQL versions.
    private static let unknownOID: Oid = 0
    private static let boolOID: Oid = 16
    private static let byteaOID: Oid = 17
    private static let int8OID: Oid = 20
    private static let float8OID: Oid = 701
    private static let textArrayOID: Oid = 1009
    private static let timestamptzOID: Oid = 1184

    init<Values: Collection>(_ values: Values) throws(PostgresError) where Values.Element == PostgresValue {
        guard values.count <= Self.maximumCount else {
            throw .client("\(values.count) parameters; the protocol allows at most \(Self.maximumCount) per statement", sqlState: "54023")
        }
        types.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        formats.reserveCapacity(values.count)
        starts.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            try append(value, number: index + 1)
        }
    }

    /// A buffer for parameters that `appendEncoded` lays out one by one
    /// (`insertColumns`'s arrays), with room for `capacity` bytes of them.
    init(parameters: Int, capacity: Int) {
        types.reserveCapacity(parameters)
        lengths.reserveCapacity(parameters)
        formats.reserveCapacity(parameters)
        starts.reserveCapacity(parameters)
        bytes.reserveCapacity(capacity)
    }

    /// Appends parameter `number` (its position, for messages), which `write`
    /// produces in place at the end of the buffer, so a large array parameter
    /// is never built separately and copied. Binary: its length is what `write`
    /// appended. Text: a C string, so `write` must not append a NUL.
    mutating func appendEncoded(type: Oid, binary: Bool, number: Int,
                                _ write: (inout [UInt8]) throws(PostgresError) -> Void) throws(PostgresError) {
        guard count < Self.maximumCount else {
            throw .client("\(count + 1) parameters; the protocol allows at most \(Self.maximumCount) per statement", sqlState: "54023")
        }
        let start = bytes.count
        do throws(PostgresError) {
            try write(&bytes)
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
        let length = bytes.count - start
        guard length <= Int(Int32.max) else {
            bytes.removeSubrange(start...)
            throw .client("parameter $\(number) is larger than 2 GiB", sqlState: "54000")
        }
        bytes.append(0)
        types.append(type); lengths.append(binary ? Int32(length) : 0); formats.append(binary ? 1 : 0); starts.append(start)
    }

    private mutating func append(_ value: PostgresValue, number: Int) throws(PostgresError) {
        switch value {
        case .null:
            types.append(Self.unknownOID); lengths.append(0); formats.append(0); starts.append(nil)
        case .text(let string):
            try appendText(string, type: Self.unknownOID, number: number)
        case .bytes(let data):
            guard data.count <= Int(Int32.max) else { throw .client("bytea parameter $\(number) is larger than 2 GiB", sqlState: "54000") }
            // Binary format: the server's bytearecv takes the bytes as they are.
            types.append(Self.byteaOID); lengths.append(Int32(data.count)); formats.append(1)
            starts.append(bytes.count)
            bytes.append(contentsOf: data)
            bytes.append(0)
        case .int(let integer):
            try appendText(String(integer), type: Self.int8OID, number: number)
        case .double(let double):
            try appendText(Self.float8Text(double), type: Self.float8OID, number: number)
        case .bool(let bool):
            try appendText(bool ? "t" : "f", type: Self.boolOID, number: number)
        case .timestamp(let date):
            guard let text = TimestampText.format(date) else {
                throw .client("timestamp parameter $\(number) is outside years 0001–9999 or not finite", sqlState: "22008")
            }
            try appendText(text, type: Self.timestamptzOID, number: number)
        case .textArray(let elements):
            try appendText(Self.arrayLiteral(elements), type: Self.textArrayOID, number: number)
        }
    }

    private mutating func appendText(_ string: String, type: Oid, number: Int) throws(PostgresError) {
        let start = bytes.count
        guard NULFreeText.append(string, to: &bytes) else {
            throw .client("text parameter $\(number) contains U+0000, which PostgreSQL text cannot store", sqlState: "22021")
        }
        bytes.append(0)
        types.append(type); lengths.append(0); formats.append(0); starts.append(start)
    }

    /// Swift's shortest round-trip spelling, except for the non-finite values.
    private static func float8Text(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return String(value)
    }

    /// `{"a","b\"c"}`: every element quoted, so NULL, empty strings, commas and
    /// braces stay plain text.
    static func arrayLiteral(_ elements: [String]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            literal += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    /// Calls `body` with the C arrays `PQexecParams` takes; the pointers are valid only inside `body`.
    func withUnsafeArguments<R>(_ body: (
        _ types: UnsafePointer<Oid>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
        _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?
    ) -> R) -> R {
        bytes.withUnsafeBufferPointer { storage in
            let base = storage.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            let values: [UnsafePointer<CChar>?] = starts.map { start -> UnsafePointer<CChar>? in
                guard let start, let base else { return nil }
                return base + start
            }
            return types.withUnsafeBufferPointer { types in
                values.withUnsafeBufferPointer { values in
                    lengths.withUnsafeBufferPointer { lengths in
                        formats.withUnsafeBufferPointer { formats in
                            body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}
