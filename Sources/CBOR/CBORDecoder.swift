/// A strict RFC 8949 decoder for bytes from strangers.
///
/// Map keys are integers, strings, simple values or floats. A key that is an
/// array, a map or a tag is refused: no mdoc, COSE or Apple structure has one,
/// and finding a duplicate among such keys means re-encoding each in
/// preferred form, which a nest of maps keyed by maps repeats at every level
/// (the cost of the input times its depth).
///
/// Every limit turns hostile input into a `CBORError` before any allocation
/// proportional to a claimed length: a length prefix is checked against the
/// bytes that remain, nesting is bounded (so recursion is bounded), and the
/// total number of items is capped.
public struct CBORDecoder: Sendable {
    public struct Limits: Sendable, Equatable {
        public var maxDepth: Int
        public var maxItems: Int
        public var maxInputSize: Int
        /// Shared by every decode of one event (`CBORBudget`); nil: each decode on its own limits.
        public var budget: CBORBudget?

        public init(maxDepth: Int = 32, maxItems: Int = 100_000, maxInputSize: Int = 16 << 20, budget: CBORBudget? = nil) {
            self.maxDepth = maxDepth
            self.maxItems = maxItems
            self.maxInputSize = maxInputSize
            self.budget = budget
        }

        public static let `default` = Limits()

        /// These limits with a fresh budget for one event: as many items as
        /// one decode may hold, and `bytesPerInput` times the largest input
        /// in bytes read (nested structures are read again, inside the bytes
        /// that hold them, by each level that checks them).
        public func budgeted(bytesPerInput: Int = 4) -> Limits {
            var limits = self
            limits.budget = CBORBudget(maxItems: maxItems, maxBytes: maxInputSize.multipliedReportingOverflow(by: bytesPerInput).partialValue)
            return limits
        }

        public static func == (lhs: Limits, rhs: Limits) -> Bool {
            lhs.maxDepth == rhs.maxDepth && lhs.maxItems == rhs.maxItems && lhs.maxInputSize == rhs.maxInputSize && lhs.budget === rhs.budget
        }
    }

    public let limits: Limits

    /// The most elements room is made for ahead of reading them, whatever a
    /// head claims; larger containers grow as their items arrive. For every
    /// reader of counts from strangers.
    public static let maxReservation = 1_024

    public init(limits: Limits = .default) {
        self.limits = limits
    }

    /// Decodes exactly one item that spans all of `input`.
    public func decode(_ input: ArraySlice<UInt8>) throws(CBORError) -> CBORItem {
        guard input.count <= limits.maxInputSize else {
            throw .inputTooLarge(size: input.count, limit: limits.maxInputSize)
        }
        if let budget = limits.budget, !budget.takeBytes(input.count) {
            throw .budgetExceeded(items: budget.maxItems, bytes: budget.maxBytes)
        }
        var reader = Reader(input: input, limits: limits)
        let item = try reader.readItem(depth: 0)
        guard reader.position == input.endIndex else {
            throw .trailingBytes(offset: reader.position - input.startIndex)
        }
        return item
    }

    public func decode(_ input: [UInt8]) throws(CBORError) -> CBORItem {
        try decode(input[...])
    }

    /// Decodes the one item that starts at `start` within `input` (at nesting
    /// `depth` of an enclosing structure the caller reads itself) and returns
    /// it with the index just past it. For readers that walk a known shape by
    /// hand and hand only its values to the decoder.
    public func decodeItem(in input: ArraySlice<UInt8>, at start: Int, depth: Int = 0) throws(CBORError) -> (item: CBORItem, end: Int) {
        var itemCount = 0
        return try decodeItem(in: input, at: start, depth: depth, itemCount: &itemCount)
    }

    /// As above, counting items on from `itemCount`, the items the caller has
    /// already read of the same enclosing structure: the item limit then
    /// holds for the whole structure, as it does when `decode` reads it all.
    public func decodeItem(in input: ArraySlice<UInt8>, at start: Int, depth: Int, itemCount: inout Int) throws(CBORError) -> (item: CBORItem, end: Int) {
        guard input.count <= limits.maxInputSize else {
            throw .inputTooLarge(size: input.count, limit: limits.maxInputSize)
        }
        precondition(start >= input.startIndex && start <= input.endIndex, "start lies within the input")
        var reader = Reader(input: input, limits: limits)
        reader.position = start
        reader.itemCount = itemCount
        let item = try reader.readItem(depth: depth)
        itemCount = reader.itemCount
        // The enclosing input was charged by whoever reads it; these bytes are read once more.
        if let budget = limits.budget, !budget.takeBytes(reader.position - start) {
            throw .budgetExceeded(items: budget.maxItems, bytes: budget.maxBytes)
        }
        return (item, reader.position)
    }
}

private struct Reader {
    let input: ArraySlice<UInt8>
    let limits: CBORDecoder.Limits
    var position: Int
    var itemCount = 0

    init(input: ArraySlice<UInt8>, limits: CBORDecoder.Limits) {
        self.input = input
        self.limits = limits
        self.position = input.startIndex
    }

    var offset: Int { position - input.startIndex }
    var remaining: Int { input.endIndex - position }

    private struct Head {
        let major: UInt8
        let additional: UInt8
        /// The argument; nil for indefinite length (additional information 31).
        let argument: UInt64?
    }

    mutating func readByte() throws(CBORError) -> UInt8 {
        guard position < input.endIndex else { throw .truncated(offset: offset) }
        defer { position += 1 }
        return input[position]
    }

    private mutating func readHead() throws(CBORError) -> Head {
        let start = offset
        let initial = try readByte()
        let major = initial >> 5
        let additional = initial & 0x1f
        switch additional {
        case 0..<24:
            return Head(major: major, additional: additional, argument: UInt64(additional))
        case 24, 25, 26, 27:
            let width = 1 << Int(additional - 24)
            guard remaining >= width else { throw .truncated(offset: offset) }
            var value: UInt64 = 0
            for _ in 0..<width { value = value << 8 | UInt64(input[position]); position += 1 }
            return Head(major: major, additional: additional, argument: value)
        case 31:
            guard (2...5).contains(major) else {
                throw .notWellFormed(offset: start, reason: major == 7 ? "unexpected break" : "indefinite length on an integer or tag")
            }
            return Head(major: major, additional: additional, argument: nil)
        default:
            throw .notWellFormed(offset: start, reason: "reserved additional information \(additional)")
        }
    }

    private mutating func countItem() throws(CBORError) {
        itemCount += 1
        guard itemCount <= limits.maxItems else { throw .itemLimitExceeded(limit: limits.maxItems) }
        if let budget = limits.budget, !budget.takeItem() {
            throw .budgetExceeded(items: budget.maxItems, bytes: budget.maxBytes)
        }
    }

    /// Room reserved for a container's claimed count: no more than
    /// `CBORDecoder.maxReservation`, the rest grows as items arrive. Every
    /// level of a nest reserves at once, before any item is read, so a bound
    /// by the items still allowed would let 31 levels each claiming the
    /// remaining input hold 31 times the item limit's memory.
    private func reservation(_ claimed: UInt64) -> Int {
        Int(min(claimed, UInt64(CBORDecoder.maxReservation)))
    }

    private func nextIsBreak() -> Bool {
        position < input.endIndex && input[position] == 0xff
    }

    mutating func readItem(depth: Int) throws(CBORError) -> CBORItem {
        guard depth < limits.maxDepth else { throw .depthLimitExceeded(limit: limits.maxDepth) }
        try countItem()
        let start = position
        let head = try readHead()
        let content: CBORItem.Content
        switch head.major {
        case 0:
            content = .unsigned(head.argument!)
        case 1:
            content = .negative(head.argument!)
        case 2:
            content = .bytes(try readString(head, major: 2))
        case 3:
            let stringStart = offset
            let raw = try readString(head, major: 3)
            guard let text = raw.withUnsafeBufferPointer(validatedText) else { throw .invalidUTF8(offset: stringStart) }
            content = .text(text)
        case 4:
            content = .array(try readArray(head, depth: depth))
        case 5:
            content = .map(try readMap(head, depth: depth))
        case 6:
            content = .tagged(head.argument!, try readItem(depth: depth + 1))
        default:
            content = try readSimpleOrFloat(head, start: start)
        }
        return CBORItem(encoded: input[start..<position], content: content)
    }

    /// A definite string is a slice of the input; an indefinite one joins its
    /// definite chunks of the same major type (and is then a fresh array).
    private mutating func readString(_ head: Head, major: UInt8) throws(CBORError) -> ArraySlice<UInt8> {
        if let length = head.argument {
            guard length <= UInt64(remaining) else { throw .lengthExceedsInput(offset: offset) }
            let end = position + Int(length)
            defer { position = end }
            return input[position..<end]
        }
        var joined: [UInt8] = []
        while true {
            guard position < input.endIndex else { throw .truncated(offset: offset) }
            if input[position] == 0xff { position += 1; break }
            let chunkStart = offset
            let chunk = try readHead()
            guard chunk.major == major, let length = chunk.argument else {
                throw .notWellFormed(offset: chunkStart, reason: "indefinite string chunk of another type or length")
            }
            try countItem()
            guard length <= UInt64(remaining) else { throw .lengthExceedsInput(offset: offset) }
            joined.append(contentsOf: input[position..<position + Int(length)])
            position += Int(length)
        }
        return joined[...]
    }

    private mutating func readArray(_ head: Head, depth: Int) throws(CBORError) -> [CBORItem] {
        var items: [CBORItem] = []
        if let count = head.argument {
            // Every item takes at least one byte: a larger count is a lie.
            guard count <= UInt64(remaining) else { throw .lengthExceedsInput(offset: offset) }
            items.reserveCapacity(reservation(count))
            for _ in 0..<count { items.append(try readItem(depth: depth + 1)) }
        } else {
            while !nextIsBreak() {
                guard position < input.endIndex else { throw .truncated(offset: offset) }
                items.append(try readItem(depth: depth + 1))
            }
            position += 1
        }
        return items
    }

    private mutating func readMap(_ head: Head, depth: Int) throws(CBORError) -> [CBORItem.Entry] {
        var entries: [CBORItem.Entry] = []
        var keys = MapKeySet()
        // Key and value are moved into the entry where they are read (a helper
        // taking them as arguments would copy both, retains included).
        if let count = head.argument {
            guard count <= UInt64(remaining / 2) else { throw .lengthExceedsInput(offset: offset) }
            entries.reserveCapacity(reservation(count))
            for _ in 0..<count {
                let keyOffset = offset
                try refuseContainerKey()
                let key = try readItem(depth: depth + 1)
                let value = try readItem(depth: depth + 1)
                guard keys.insert(key, after: entries) else { throw .duplicateMapKey(offset: keyOffset) }
                entries.append(CBORItem.Entry(key: key, value: value))
            }
        } else {
            while !nextIsBreak() {
                guard position < input.endIndex else { throw .truncated(offset: offset) }
                let keyOffset = offset
                try refuseContainerKey()
                let key = try readItem(depth: depth + 1)
                guard !nextIsBreak() else { throw .notWellFormed(offset: offset, reason: "map key without a value") }
                let value = try readItem(depth: depth + 1)
                guard keys.insert(key, after: entries) else { throw .duplicateMapKey(offset: keyOffset) }
                entries.append(CBORItem.Entry(key: key, value: value))
            }
            position += 1
        }
        return entries
    }

    /// Before a key is read: its major type must not be 4, 5 or 6.
    private func refuseContainerKey() throws(CBORError) {
        guard position < input.endIndex else { return }
        if (4...6).contains(input[position] >> 5) { throw .containerMapKey(offset: offset) }
    }

    private mutating func readSimpleOrFloat(_ head: Head, start: Int) throws(CBORError) -> CBORItem.Content {
        let argument = head.argument!
        switch head.additional {
        case 0..<20: return .simple(UInt8(argument))
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 24:
            guard argument >= 32 else {
                throw .notWellFormed(offset: start - input.startIndex, reason: "two-byte simple value below 32")
            }
            return .simple(UInt8(argument))
        case 25: return .float(Double(halfToFloat(UInt16(argument))))
        case 26: return .float(Double(Float(bitPattern: UInt32(argument))))
        default: return .float(Double(bitPattern: argument))
        }
    }
}

/// The text of UTF-8 bytes, nil when they are not valid UTF-8. ASCII, nearly
/// every key and most values, skips the generic validator, which looks up
/// type metadata on every call.
@usableFromInline
func validatedText(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    var combined: UInt8 = 0
    for byte in bytes { combined |= byte }
    if combined < 0x80 { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes, as: UTF8.self)
}

/// IEEE 754 binary16 → binary32 (RFC 8949 Appendix D), exact for every input.
func halfToFloat(_ half: UInt16) -> Float {
    let exponent = Int((half >> 10) & 0x1f)
    let mantissa = Float(half & 0x3ff)
    let magnitude: Float
    switch exponent {
    case 0: magnitude = mantissa * 0x1p-24
    case 31: magnitude = mantissa == 0 ? .infinity : .nan
    default: magnitude = (mantissa + 1024) * Float(sign: .plus, exponent: exponent - 25, significand: 1)
    }
    return half & 0x8000 != 0 ? -magnitude : magnitude
}
