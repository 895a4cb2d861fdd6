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
public struct CBORCursor {
    public let input: ArraySlice<UInt8>
    public private(set) var position: Int
    let limits: CBORDecoder.Limits
    /// Items read so far, counted as `CBORDecoder` counts them.
    private var itemCount = 0

    /// Nil when the decoder would refuse the input for its size alone.
    public init?(_ input: ArraySlice<UInt8>, limits: CBORDecoder.Limits = .default) {
        guard input.count <= limits.maxInputSize else { return nil }
        self.input = input
        self.limits = limits
        position = input.startIndex
    }

    public var isAtEnd: Bool { position == input.endIndex }

    /// The major type of the next item, without reading it.
    public var nextMajor: UInt8? {
        position < input.endIndex ? input[position] >> 5 : nil
    }

    /// The argument of a definite head of major type `major`, counted as one item.
    private mutating func head(_ major: UInt8) -> UInt64? {
        guard position < input.endIndex, itemCount < limits.maxItems else { return nil }
        let initial = input[position]
        guard initial >> 5 == major else { return nil }
        let additional = initial & 0x1f
        var next = position + 1
        let argument: UInt64
        switch additional {
        case 0..<24:
            argument = UInt64(additional)
        case 24, 25, 26, 27:
            let width = 1 << Int(additional - 24)
            guard input.endIndex - next >= width else { return nil }
            var value: UInt64 = 0
            for index in next..<next + width { value = value << 8 | UInt64(input[index]) }
            next += width
            argument = value
        default:
            return nil
        }
        position = next
        itemCount += 1
        return argument
    }

    /// The entry count of a definite map, when the input could hold it.
    public mutating func mapCount() -> Int? {
        let start = position, count = itemCount
        guard let entries = head(5), entries <= UInt64((input.endIndex - position) / 2) else {
            position = start; itemCount = count
            return nil
        }
        return Int(entries)
    }

    /// The element count of a definite array, when the input could hold it.
    public mutating func arrayCount() -> Int? {
        let start = position, count = itemCount
        guard let elements = head(4), elements <= UInt64(input.endIndex - position) else {
            position = start; itemCount = count
            return nil
        }
        return Int(elements)
    }

    public mutating func unsigned() -> UInt64? {
        head(0)
    }

    /// A tag number; the tagged item follows.
    public mutating func tag() -> UInt64? {
        head(6)
    }

    /// The content of a definite byte string, a slice of the input.
    public mutating func bytes() -> ArraySlice<UInt8>? {
        string(major: 2)
    }

    /// The content of a definite text string when it is UTF-8, unconverted:
    /// keys are compared as bytes, as the decoder compares them.
    public mutating func textBytes() -> ArraySlice<UInt8>? {
        let start = position, count = itemCount
        guard let content = string(major: 3), content.withUnsafeBufferPointer({ validatedText($0) }) != nil else {
            position = start; itemCount = count
            return nil
        }
        return content
    }

    public mutating func text() -> String? {
        let start = position, count = itemCount
        guard let content = string(major: 3), let text = content.withUnsafeBufferPointer(validatedText) else {
            position = start; itemCount = count
            return nil
        }
        return text
    }

    private mutating func string(major: UInt8) -> ArraySlice<UInt8>? {
        let start = position, count = itemCount
        guard let length = head(major), length <= UInt64(input.endIndex - position) else {
            position = start; itemCount = count
            return nil
        }
        let end = position + Int(length)
        defer { position = end }
        return input[position..<end]
    }

    /// The next item, whatever it is, read by the decoder at `depth` (of the
    /// structure this cursor reads) with the items counted so far.
    public mutating func item(depth: Int) -> CBORItem? {
        var count = itemCount
        guard position < input.endIndex,
              let (item, end) = try? CBORDecoder(limits: limits).decodeItem(in: input, at: position, depth: depth, itemCount: &count)
        else { return nil }
        position = end
        itemCount = count
        return item
    }
}

extension ArraySlice<UInt8> {
    /// Whether these bytes are exactly `name`'s UTF-8: how a fast path matches a
    /// text key without making a String.
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
