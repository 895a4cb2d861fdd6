/// Reads the items of a known shape in place, for fast paths that hand-read
/// the form nearly every sender writes instead of building a `CBORItem` tree
/// (a map's entries, keys and duplicate check cost more than its content).
///
/// Every read answers nil instead of throwing, for anything it does not take:
/// an indefinite length, reserved additional information, another type, a
/// count the input cannot hold, the item limit reached. The caller then
/// leaves the whole input to `CBORDecoder`, which reads it or refuses it with
/// the precise reason. What the cursor does take, it reads as the decoder
/// would — the same values from any head width, the same item count, text
/// validated as UTF-8 — so a fast path reads exactly what the general one does.
///
/// The reads are inlinable: called across modules once per key and value,
/// a call's overhead is as large as the read.
public struct CBORCursor {
    public let input: ArraySlice<UInt8>
    /// Where the next item starts.
    @inlinable public var position: Int { next }
    @usableFromInline var next: Int
    public let limits: CBORDecoder.Limits
    /// Items read so far, counted as `CBORDecoder` counts them.
    @usableFromInline var itemCount = 0

    /// Nil when the decoder would refuse the input for its size alone, or
    /// the event's budget has no room to read it.
    public init?(_ input: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) {
        guard input.count <= limits.maxInputSize else { return nil }
        if let budget = limits.budget, !budget.takeBytes(input.count) { return nil }
        self.input = input
        self.limits = limits
        next = input.startIndex
    }

    @inlinable
    public var isAtEnd: Bool { next == input.endIndex }

    /// The major type of the next item, without reading it.
    @inlinable
    public var nextMajor: UInt8? {
        next < input.endIndex ? input[next] >> 5 : nil
    }

    /// The argument of a definite head of major type `major`, counted as one item.
    @inlinable
    mutating func head(_ major: UInt8) -> UInt64? {
        guard next < input.endIndex, itemCount < limits.maxItems else { return nil }
        let initial = input[next]
        guard initial >> 5 == major, limits.budget?.takeItem() ?? true else { return nil }
        let additional = initial & 0x1f
        var after = next + 1
        let argument: UInt64
        switch additional {
        case 0..<24:
            argument = UInt64(additional)
        case 24, 25, 26, 27:
            let width = 1 << Int(additional - 24)
            guard input.endIndex - after >= width else { return nil }
            var value: UInt64 = 0
            for index in after..<after + width { value = value << 8 | UInt64(input[index]) }
            after += width
            argument = value
        default:
            return nil
        }
        next = after
        itemCount += 1
        return argument
    }

    /// The entry count of a definite map, when the input could hold it.
    @inlinable
    public mutating func mapCount() -> Int? {
        let start = next, count = itemCount
        guard let entries = head(5), entries <= UInt64((input.endIndex - next) / 2) else {
            next = start; itemCount = count
            return nil
        }
        return Int(entries)
    }

    /// The element count of a definite array, when the input could hold it.
    @inlinable
    public mutating func arrayCount() -> Int? {
        let start = next, count = itemCount
        guard let elements = head(4), elements <= UInt64(input.endIndex - next) else {
            next = start; itemCount = count
            return nil
        }
        return Int(elements)
    }

    @inlinable
    public mutating func unsigned() -> UInt64? {
        head(0)
    }

    /// A tag number; the tagged item follows.
    @inlinable
    public mutating func tag() -> UInt64? {
        head(6)
    }

    /// The content of a definite byte string, a slice of the input.
    @inlinable
    public mutating func bytes() -> ArraySlice<UInt8>? {
        string(major: 2)
    }

    /// The content of a definite text string when it is UTF-8, unconverted:
    /// keys are compared as bytes, as the decoder compares them.
    @inlinable
    public mutating func textBytes() -> ArraySlice<UInt8>? {
        let start = next, count = itemCount
        guard let content = string(major: 3), content.withUnsafeBufferPointer(isUTF8) else {
            next = start; itemCount = count
            return nil
        }
        return content
    }

    @inlinable
    public mutating func text() -> String? {
        let start = next, count = itemCount
        guard let content = string(major: 3), let text = content.withUnsafeBufferPointer(validatedText) else {
            next = start; itemCount = count
            return nil
        }
        return text
    }

    @inlinable
    mutating func string(major: UInt8) -> ArraySlice<UInt8>? {
        let start = next, count = itemCount
        guard let length = head(major), length <= UInt64(input.endIndex - next) else {
            next = start; itemCount = count
            return nil
        }
        let end = next + Int(length)
        defer { next = end }
        return input[next..<end]
    }

    /// The next item, whatever it is, read by the decoder at `depth` (of the
    /// structure this cursor reads) with the items counted so far.
    public mutating func item(depth: Int) -> CBORItem? {
        var count = itemCount
        guard next < input.endIndex,
              let (item, end) = try? CBORDecoder(limits: limits).decodeItem(in: input, at: next, depth: depth, itemCount: &count)
        else { return nil }
        next = end
        itemCount = count
        return item
    }
}

extension CBORCursor {
    /// Skips the value of an entry whose text key a fast path does not read,
    /// decoding it (so it is as well-formed as the decoder demands) at
    /// `depth`. False when the value does not decode or `key` is among
    /// `earlier`, the other skipped keys of the map: a duplicate key, since
    /// text keys are the same exactly when their bytes are. The keys a fast
    /// path reads it checks itself.
    public mutating func skipEntry(_ key: ArraySlice<UInt8>, among earlier: inout TextKeySet, depth: Int) -> Bool {
        guard earlier.insert(key), item(depth: depth) != nil else { return false }
        return true
    }

    /// What a fast path's member reader says of one entry.
    public enum Member {
        /// A key it reads, and it read the value.
        case read
        /// A key it reads, with a value it refuses (or a second time).
        case refused
        /// A key it does not read: `forEachTextKey` skips the entry.
        case other
    }

    /// Reads `count` entries of a map with text keys in place: `member` reads
    /// the value of each key it knows; the others are skipped as `skipEntry`
    /// skips them (decoded at `depth`, refused when repeated). False when a
    /// key is not text, `member` refuses a value, or a skipped entry fails.
    @inlinable
    public mutating func forEachTextKey(count: Int, depth: Int, _ member: (inout CBORCursor, ArraySlice<UInt8>) -> Member) -> Bool {
        var otherKeys = TextKeySet()
        for _ in 0..<count {
            guard let key = textBytes() else { return false }
            switch member(&self, key) {
            case .read: continue
            case .refused: return false
            case .other: guard skipEntry(key, among: &otherKeys, depth: depth) else { return false }
            }
        }
        return true
    }
}

/// Whether bytes are UTF-8, without making a String of ASCII (nearly every key).
@inlinable
func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var combined: UInt8 = 0
    for byte in bytes { combined |= byte }
    return combined < 0x80 || String(validating: bytes, as: UTF8.self) != nil
}

extension ArraySlice<UInt8> {
    /// Whether these bytes are exactly `name`'s UTF-8: how a fast path matches a
    /// text key without making a String.
    @inlinable
    public func isUTF8(_ name: StaticString) -> Bool {
        guard count == name.utf8CodeUnitCount else { return false }
        return withUnsafeBufferPointer { bytes in
            name.withUTF8Buffer { name in
                for index in 0..<name.count where bytes[index] != name[index] { return false }
                return true
            }
        }
    }
}
