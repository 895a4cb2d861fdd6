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
    private var open: [(needsComma: Bool, lastKey: StaticString?)] = []

    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func beginObject() { begin(UInt8(ascii: "{")) }
    public mutating func endObject() { end(UInt8(ascii: "}")) }
    public mutating func beginArray() { begin(UInt8(ascii: "[")) }
    public mutating func endArray() { end(UInt8(ascii: "]")) }

    private mutating func begin(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        open.append((false, nil))
    }

    private mutating func end(_ bracket: UInt8) {
        open.removeLast()
        bytes.append(bracket)
    }

    /// The next member's key; its value follows with any of the value writers.
    /// Keys are literals of plain ASCII (checked in debug builds), so they are
    /// copied without escaping.
    public mutating func key(_ key: StaticString) {
        assert(key.hasPointerRepresentation && key.withUTF8Buffer { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C } },
               "JSONStream keys are plain ASCII literals")
        assert(open.last.map { last in last.lastKey.map { precedes($0, key) } ?? true } ?? false,
               "JSONStream keys out of order or outside an object: \(key)")
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        open[open.count - 1].needsComma = false
        assert({ open[open.count - 1].lastKey = key; return true }())
    }

    private func precedes(_ lhs: StaticString, _ rhs: StaticString) -> Bool {
        lhs.withUTF8Buffer { left in rhs.withUTF8Buffer { right in left.lexicographicallyPrecedes(right) } }
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
