/// Writes compact JSON straight into bytes, member by member, for hot paths
/// where building a `JSONValue` tree first costs more than the writing (the
/// outcome event is written once per verification).
///
/// The caller chooses member order; to match `JSONWriter`'s sorted order it
/// must write keys in ascending UTF-8 order, which debug builds check.
/// Strings are escaped exactly as `JSONWriter` escapes them.
public struct JSONStream: Sendable {
    /// Written through a pointer rather than appended to an array: an
    /// `Array.append` per key, quote and comma would cost more than writing
    /// the outcome's whole content.
    private var buffer: ByteBuffer
    /// Whether the next value in the innermost container needs a comma. One
    /// flag is enough: a container's end always leaves its parent after a value.
    private var needsComma = false
    /// Open containers; a top-level value takes no comma.
    private var depth = 0
    /// Debug builds only: per open container, whether it is an object and its
    /// previous key (for the order check).
    private var open: [(isObject: Bool, lastKey: StaticString?)] = []

    public init(capacity: Int = 1024) {
        buffer = ByteBuffer(capacity: max(capacity, 16))
    }

    public var bytes: [UInt8] { Array(buffer.written) }

    public var string: String { String(decoding: buffer.written, as: UTF8.self) }

    public mutating func beginObject() { begin(UInt8(ascii: "{"), isObject: true) }
    public mutating func endObject() { end(UInt8(ascii: "}")) }
    public mutating func beginArray() { begin(UInt8(ascii: "["), isObject: false) }
    public mutating func endArray() { end(UInt8(ascii: "]")) }

    private mutating func begin(_ bracket: UInt8, isObject: Bool) {
        let out = reserve(2)
        out[0] = UInt8(ascii: ",")
        let comma = separate()
        out[comma] = bracket
        buffer.count += comma + 1
        depth += 1
        needsComma = false
        assert({ open.append((isObject, nil)); return true }())
    }

    private mutating func end(_ bracket: UInt8) {
        precondition(depth > 0, "JSONStream: end without a begin")
        assert({ open.removeLast(); return true }())
        reserve(1)[0] = bracket
        buffer.count += 1
        depth -= 1
        needsComma = true
    }

    /// The next member's key; its value follows with any of the value writers.
    /// Keys are literals of plain ASCII (checked in debug builds), so they are
    /// copied without escaping.
    public mutating func key(_ key: StaticString) {
        assert(key.hasPointerRepresentation && key.withUTF8Buffer { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C } },
               "JSONStream keys are plain ASCII literals")
        assert(open.last.map { last in last.isObject && (last.lastKey.map { precedes($0, key) } ?? true) } ?? false,
               "JSONStream keys out of order or outside an object: \(key)")
        let length = key.utf8CodeUnitCount
        let out = reserve(length + 4)
        out[0] = UInt8(ascii: ",")
        let comma = separate()
        out[comma] = UInt8(ascii: "\"")
        (out + comma + 1).update(from: key.utf8Start, count: length)
        out[comma + 1 + length] = UInt8(ascii: "\"")
        out[comma + 2 + length] = UInt8(ascii: ":")
        buffer.count += comma + 3 + length
        // The value follows the colon directly.
        needsComma = false
        assert({ open[open.count - 1].lastKey = key; return true }())
    }

    private func precedes(_ lhs: StaticString, _ rhs: StaticString) -> Bool {
        lhs.withUTF8Buffer { left in rhs.withUTF8Buffer { right in left.lexicographicallyPrecedes(right) } }
    }

    public mutating func string(_ text: String) {
        // Native and small strings lend their UTF-8 without a copy of the string.
        if text.utf8.withContiguousStorageIfAvailable({ write(quoting: $0) }) == nil {
            var text = text
            text.withUTF8 { write(quoting: $0) }
        }
    }

    /// `.string`, or `null` for nil.
    public mutating func string(orNull text: String?) {
        if let text { string(text) } else { null() }
    }

    public mutating func integer(_ value: Int) {
        // 20 digits and a sign at most, written backwards then moved in place.
        let out = reserve(22)
        out[0] = UInt8(ascii: ",")
        let comma = separate()
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let count = withUnsafeMutableBytes(of: &digits) { scratch in
            var magnitude = value.magnitude
            var next = scratch.count
            repeat {
                next -= 1
                scratch[next] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                next -= 1
                scratch[next] = UInt8(ascii: "-")
            }
            let count = scratch.count - next
            UnsafeMutableRawPointer(out + comma).copyMemory(from: scratch.baseAddress! + next, byteCount: count)
            return count
        }
        buffer.count += comma + count
    }

    public mutating func null() {
        let out = reserve(5)
        out[0] = UInt8(ascii: ",")
        let comma = separate()
        out[comma] = UInt8(ascii: "n")
        out[comma + 1] = UInt8(ascii: "u")
        out[comma + 2] = UInt8(ascii: "l")
        out[comma + 3] = UInt8(ascii: "l")
        buffer.count += comma + 4
    }

    /// A whole value, written as `JSONWriter` with `keyOrder` writes it.
    public mutating func value(_ value: JSONValue, keyOrder: JSONWriter.KeyOrder = .sorted) {
        let written = JSONWriter(keyOrder: keyOrder).bytes(value)
        let out = reserve(written.count + 1)
        out[0] = UInt8(ascii: ",")
        let comma = separate()
        written.withUnsafeBufferPointer { (out + comma).update(from: $0.baseAddress!, count: $0.count) }
        buffer.count += comma + written.count
    }

    /// 1 if the value about to be written needs the comma the caller has
    /// already put at the write position (so it is kept), else 0 (so it is
    /// overwritten); either way the next value in this container needs one.
    @inline(__always)
    private mutating func separate() -> Int {
        let comma = needsComma && depth > 0 ? 1 : 0
        needsComma = true
        return comma
    }

    /// The write position, with room for `count` more bytes.
    @inline(__always)
    private mutating func reserve(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        if !isKnownUniquelyReferenced(&buffer) || buffer.count + count > buffer.capacity {
            buffer = buffer.copy(minimumCapacity: buffer.count + count)
        }
        return buffer.base + buffer.count
    }

    /// A quoted string. Text with nothing to escape (nearly all of it) is
    /// copied while it is checked, eight bytes at a time, into room reserved
    /// once; the first byte that needs an escape hands the rest to the slow path.
    private mutating func write(quoting text: UnsafeBufferPointer<UInt8>) {
        let length = text.count
        let out = reserve(length + 3)
        out[0] = UInt8(ascii: ",")
        let comma = separate()
        out[comma] = UInt8(ascii: "\"")
        let destination = out + comma + 1
        var plain = 0
        if let source = UnsafeRawPointer(text.baseAddress) {
            let target = UnsafeMutableRawPointer(destination)
            while plain + 8 <= length {
                let word = source.loadUnaligned(fromByteOffset: plain, as: UInt64.self)
                if mayEndPlainRun(word) { break }
                target.storeBytes(of: word, toByteOffset: plain, as: UInt64.self)
                plain += 8
            }
            // The last few bytes as the word that ends the text, overlapping
            // what is already checked and copied.
            if plain < length, length >= 8, plain + 8 > length {
                let last = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
                if !mayEndPlainRun(last) {
                    target.storeBytes(of: last, toByteOffset: length - 8, as: UInt64.self)
                    plain = length
                }
            }
            while plain < length {
                let byte = text[plain]
                if needsEscape(byte) { break }
                destination[plain] = byte
                plain += 1
            }
        }
        if plain == length {
            destination[length] = UInt8(ascii: "\"")
            buffer.count += comma + length + 2
            return
        }
        buffer.count += comma + 1 + plain
        writeEscaping(UnsafeBufferPointer(rebasing: text[plain...]))
        reserve(1)[0] = UInt8(ascii: "\"")
        buffer.count += 1
    }

    @inline(__always)
    private func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The rare rest of a string from its first byte that needs escaping.
    private mutating func writeEscaping(_ text: UnsafeBufferPointer<UInt8>) {
        for byte in text {
            guard needsEscape(byte) else {
                reserve(1)[0] = byte
                buffer.count += 1
                continue
            }
            let out = reserve(6)
            out[0] = UInt8(ascii: "\\")
            var length = 2
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out[1] = byte
            case 0x08: out[1] = UInt8(ascii: "b")
            case 0x0C: out[1] = UInt8(ascii: "f")
            case 0x0A: out[1] = UInt8(ascii: "n")
            case 0x0D: out[1] = UInt8(ascii: "r")
            case 0x09: out[1] = UInt8(ascii: "t")
            default:
                out[1] = UInt8(ascii: "u")
                out[2] = UInt8(ascii: "0")
                out[3] = UInt8(ascii: "0")
                out[4] = hexDigit(byte >> 4)
                out[5] = hexDigit(byte & 0x0F)
                length = 6
            }
            buffer.count += length
        }
    }

    private func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

/// The stream's storage: one allocation, grown by doubling. Shared only
/// between copies of a stream, and copied before either writes (as an
/// array's storage is), hence safe to send.
private final class ByteBuffer: @unchecked Sendable {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    var count = 0

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    deinit { base.deallocate() }

    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    func copy(minimumCapacity: Int) -> ByteBuffer {
        let copy = ByteBuffer(capacity: max(minimumCapacity, capacity * 2))
        copy.base.update(from: base, count: count)
        copy.count = count
        return copy
    }
}
