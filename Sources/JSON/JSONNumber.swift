/// A JSON number. `integer` is set exactly when the value is a whole number
/// that fits `Int64` — decided from the digits, not from the `Double`, so
/// `2.0` and `1e2` are integers, `2.5` is not, and 2^53 + 1 keeps its last
/// digit. Booleans are a separate `JSONValue` case and never reach here.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    public let integer: Int64?
    /// The nearest `Double` (always finite: the parser refuses numbers beyond its range).
    public let double: Double

    public init(_ value: Int64) {
        integer = value
        double = Double(value)
    }

    public init(_ value: Int) {
        self.init(Int64(value))
    }

    /// Nil for NaN and the infinities, which JSON cannot express.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        double = value
        integer = Int64(exactly: value)
    }

    init(integer: Int64?, double: Double) {
        self.integer = integer
        self.double = double
    }

    /// How the writer prints it: integers as integers, other values in
    /// Swift's shortest form that reads back to the same `Double`.
    public var description: String {
        if let integer { return String(integer) }
        return double.description
    }
}
