/// A CBOR data item (RFC 8949) as a value: what Veridoc builds and encodes,
/// and what a decoded `CBORItem` converts to when its original bytes no longer matter.
public indirect enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    /// The negative integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Entries in the order they are encoded; keys are unique.
    case map([MapEntry])
    case tagged(UInt64, CBOR)
    case simple(UInt8)
    case bool(Bool)
    case null
    case undefined
    case float(Double)
    /// An item that is already encoded, written verbatim. Signed structures
    /// embed received bytes this way so that nothing is re-encoded.
    case preEncoded([UInt8])

    public struct MapEntry: Hashable, Sendable {
        public var key: CBOR
        public var value: CBOR

        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// An integer in either major type 0 or 1.
    public static func int(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// `#6.24(bstr .cbor item)`: an embedded, separately encoded data item.
    public static func embedded(_ item: CBOR) -> CBOR {
        .tagged(24, .bytes(item.encoded()))
    }
}

extension CBOR: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: CBOR...) { self = .array(elements) }
    /// Keeps the literal's order, which is the encoding order.
    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        self = .map(elements.map { MapEntry($0.0, $0.1) })
    }
}
