/// A decoded CBOR data item that remembers the exact bytes it was decoded
/// from. Digests and signatures are computed over those bytes, never over a
/// re-encoding: senders use non-preferred encodings and the hash must match theirs.
///
/// `encoded` and `bytes` contents are slices of the caller's input buffer, so
/// decoding copies no payload bytes.
public struct CBORItem: Sendable {
    /// The item's original encoding, head and content.
    public let encoded: ArraySlice<UInt8>
    public let content: Content

    /// Only `tagged` is boxed: boxing every case (an `indirect enum`) would cost
    /// one allocation per decoded item, most of them integers and short strings.
    public enum Content: Sendable {
        case unsigned(UInt64)
        case negative(UInt64)
        case bytes(ArraySlice<UInt8>)
        case text(String)
        case array([CBORItem])
        case map([Entry])
        indirect case tagged(UInt64, CBORItem)
        case simple(UInt8)
        case bool(Bool)
        case null
        case undefined
        case float(Double)
    }

    public struct Entry: Sendable {
        public let key: CBORItem
        public let value: CBORItem
    }

    init(encoded: ArraySlice<UInt8>, content: Content) {
        self.encoded = encoded
        self.content = content
    }
}

// MARK: - Reading values

extension CBORItem {
    public var text: String? { if case .text(let value) = content { value } else { nil } }

    public var bytes: ArraySlice<UInt8>? { if case .bytes(let value) = content { value } else { nil } }

    public var array: [CBORItem]? { if case .array(let value) = content { value } else { nil } }

    public var entries: [Entry]? { if case .map(let value) = content { value } else { nil } }

    public var unsigned: UInt64? { if case .unsigned(let value) = content { value } else { nil } }

    /// Major type 0 or 1 when it fits an `Int64`.
    public var int: Int64? {
        switch content {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: nil
        }
    }

    public var bool: Bool? { if case .bool(let value) = content { value } else { nil } }

    public var isNull: Bool { if case .null = content { true } else { false } }

    /// The tag number and the tagged item.
    public var tagged: (tag: UInt64, item: CBORItem)? { if case .tagged(let tag, let item) = content { (tag, item) } else { nil } }

    /// The value under a text key of a map.
    public subscript(key: String) -> CBORItem? {
        guard case .map(let entries) = content else { return nil }
        // Byte comparison: Swift's String equality would match Unicode-equivalent keys.
        var wanted = key
        return wanted.withUTF8 { wantedBytes in
            entries.withUnsafeBufferPointer { entries in
                for index in entries.indices where entries[index].hasTextKey(wantedBytes) { return entries[index].value }
                return nil
            }
        }
    }

    /// The value under an integer key of a map (COSE labels).
    public subscript(label label: Int64) -> CBORItem? {
        entries?.first { $0.key.int == label }?.value
    }

    /// The item as a plain value, dropping the original bytes.
    public var value: CBOR {
        switch content {
        case .unsigned(let value): .unsigned(value)
        case .negative(let value): .negative(value)
        case .bytes(let value): .bytes(Array(value))
        case .text(let value): .text(value)
        case .array(let items): .array(items.map(\.value))
        case .map(let entries): .map(entries.map { CBOR.MapEntry($0.key.value, $0.value.value) })
        case .tagged(let tag, let item): .tagged(tag, item.value)
        case .simple(let value): .simple(value)
        case .bool(let value): .bool(value)
        case .null: .null
        case .undefined: .undefined
        case .float(let value): .float(value)
        }
    }
}

extension CBORItem.Entry {
    /// Whether the key is the text `name`, byte for byte: one pass over a map
    /// can pick out several keys without a lookup (and a copy) per key.
    /// Inlinable so that testing an entry in place does not copy it (an opaque
    /// call gets its own copy of the entry, a retain per reference in it).
    @inlinable
    public func hasTextKey(_ name: StaticString) -> Bool {
        precondition(name.hasPointerRepresentation, "a key name is a string literal")
        return hasTextKey(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    @inlinable
    func hasTextKey(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard case .text(let text) = key.content else { return false }
        return sameUTF8(text, utf8)
    }
}

/// Whether `text` is exactly these UTF-8 bytes (no Unicode equivalence).
@usableFromInline
func sameUTF8(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard text.utf8.count == bytes.count else { return false }
    var text = text
    return text.withUTF8 { textBytes in
        for index in 0..<textBytes.count where textBytes[index] != bytes[index] { return false }
        return true
    }
}

// MARK: - Typed reads that explain what was wrong

extension CBORItem {
    public func requireText(_ context: String) throws(CBORError) -> String {
        guard let text else { throw .unexpectedType(expected: "text string", context: context) }
        return text
    }

    public func requireBytes(_ context: String) throws(CBORError) -> ArraySlice<UInt8> {
        guard let bytes else { throw .unexpectedType(expected: "byte string", context: context) }
        return bytes
    }

    public func requireArray(_ context: String) throws(CBORError) -> [CBORItem] {
        guard let array else { throw .unexpectedType(expected: "array", context: context) }
        return array
    }

    public func requireEntries(_ context: String) throws(CBORError) -> [Entry] {
        guard let entries else { throw .unexpectedType(expected: "map", context: context) }
        return entries
    }

    public func requireInt(_ context: String) throws(CBORError) -> Int64 {
        guard let int else { throw .unexpectedType(expected: "integer", context: context) }
        return int
    }

    /// The value under `key`, which must be present, of a map.
    public func require(_ key: String, in context: String) throws(CBORError) -> CBORItem {
        guard entries != nil else { throw .unexpectedType(expected: "map", context: context) }
        guard let value = self[key] else { throw .missingKey(key, context: context) }
        return value
    }

    /// The content of `#6.24(bstr .cbor X)`, decoded with the same limits.
    /// The returned item's bytes are slices of the same input buffer.
    public func decodeEmbedded(_ context: String, limits: CBORDecoder.Limits = .default) throws(CBORError) -> CBORItem {
        guard let (tag, inner) = tagged, tag == 24, let content = inner.bytes else {
            throw .unexpectedType(expected: "#6.24(bstr)", context: context)
        }
        return try CBORDecoder(limits: limits).decode(content)
    }
}
