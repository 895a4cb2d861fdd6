/// Writes compact JSON straight into bytes, member by member, for hot paths
/// where building a `JSONValue` tree first costs more than the writing (the
/// outcome event is written once per verification).
///
/// The caller chooses member order; to match `JSONWriter`'s sorted order it
/// must write keys in ascending UTF-8 order, which debug builds check.
/// Strings are escaped exactly as `JSONWriter` escapes them.
public struct JSONStream: Sendable {
    public private(set) var bytes: [UInt8]
    /// One entry per open container: whether the next value needs a comma
    /// and, in debug builds, the previous key (for the order check).
    private var open: [(needsComma: Bool, lastKey: String?)] = []

    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        open.append((false, nil))
    }

    public mutating func endObject() {
        open.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        open.append((false, nil))
    }

    public mutating func endArray() {
        open.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// The next member's key; its value follows with any of the value writers.
    public mutating func key(_ key: String) {
        assert(open.last.map { $0.lastKey.map { $0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true } ?? false,
               "JSONStream keys out of order or outside an object: \(key)")
        separate()
        JSONWriter.writeString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        open[open.count - 1].needsComma = false
        assert({ open[open.count - 1].lastKey = key; return true }())
    }

    public mutating func string(_ text: String) {
        separate()
        JSONWriter.writeString(text, to: &bytes)
    }

    /// `.string`, or `null` for nil.
    public mutating func string(orNull text: String?) {
        if let text { string(text) } else { null() }
    }

    public mutating func integer(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// A whole value, written as `JSONWriter` with `keyOrder` writes it.
    public mutating func value(_ value: JSONValue, keyOrder: JSONWriter.KeyOrder = .sorted) {
        separate()
        JSONWriter(keyOrder: keyOrder).write(value, to: &bytes)
    }

    /// A comma before every value but the first in its container; after a key
    /// the value follows the colon directly.
    private mutating func separate() {
        guard !open.isEmpty else { return }
        if open[open.count - 1].needsComma { bytes.append(UInt8(ascii: ",")) }
        open[open.count - 1].needsComma = true
    }
}
