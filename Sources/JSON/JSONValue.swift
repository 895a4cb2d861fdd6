/// A JSON value (RFC 8259). Booleans and numbers are distinct cases, so `true`
/// never passes for 1. Strings compare by their UTF-8 bytes.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// `.string`, or `.null` for nil.
    public init(_ value: String?) {
        self = value.map(JSONValue.string) ?? .null
    }

    public static func integer(_ value: Int) -> JSONValue {
        .number(JSONNumber(value))
    }

    /// Parses one JSON text with the default `JSONParser`.
    public init(parsing bytes: [UInt8]) throws(JSONParseError) {
        self = try JSONParser().parse(bytes)
    }

    /// The member `key` of an object; nil for a missing member or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }

    public var numberValue: JSONNumber? { if case .number(let value) = self { value } else { nil } }

    /// A whole number that fits `Int64`; nil for booleans, fractions and anything else.
    public var integerValue: Int64? {
        numberValue?.integer
    }

    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }

    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }

    public var objectValue: JSONObject? { if case .object(let value) = self { value } else { nil } }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): sameBytes(a, b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// Traps on a duplicate key.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements {
            precondition(object.append(key, value), "duplicate key in a JSONValue literal")
        }
        self = .object(object)
    }
}
