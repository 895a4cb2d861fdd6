/// A strict RFC 8259 parser over bytes: UTF-8 only (no byte order mark), the
/// four JSON whitespace bytes, numbers exactly per the grammar (no leading
/// zeros, no NaN or Infinity, none beyond `Double`'s range), escapes with
/// paired surrogates only, no duplicate keys, nothing after the value, and a
/// nesting limit that also bounds the parser's recursion.
public struct JSONParser: Sendable {
    /// Containers (arrays and objects) that may be open at once.
    public var maxDepth: Int
    /// Members one object may have: past them the input is refused at once,
    /// not after the rest of it was read.
    public var maxMembers: Int

    /// The depth limit is also the parser's recursion depth, hence capped.
    public init(maxDepth: Int = 64, maxMembers: Int = .max) {
        precondition((1...1024).contains(maxDepth), "maxDepth must be 1...1024")
        precondition(maxMembers >= 0, "maxMembers must not be negative")
        self.maxDepth = maxDepth
        self.maxMembers = maxMembers
    }

    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBufferPointer { parseResult($0) }
        return try result.get()
    }

    public func parse(_ buffer: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try parseResult(buffer.bindMemory(to: UInt8.self)).get()
    }

    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONParseError> = text.withUTF8 { parseResult($0) }
        return try result.get()
    }

    private func parseResult(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        var reader = JSONReader(buffer, maxDepth: maxDepth, maxMembers: maxMembers)
        do throws(JSONParseError) {
            return .success(try reader.document())
        } catch {
            return .failure(error)
        }
    }
}

private enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
}

struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    let maxMembers: Int
    var position = 0
    /// Reused for strings with escapes, so each does not allocate its own buffer.
    var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, maxMembers: Int = .max) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.maxMembers = maxMembers
    }

    mutating func document() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try value(depth: 0)
        skipWhitespace()
        guard position == bytes.count else { throw JSONParseError(.trailingData, at: position) }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    @inline(__always)
    func fail(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(position < bytes.count || reason != .unexpectedByte ? reason : .unexpectedEnd, at: position)
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
        switch bytes[position] {
        case Byte.openBrace: return .object(try object(depth: depth + 1))
        case Byte.openBracket: return .array(try array(depth: depth + 1))
        case Byte.quote: return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case Byte.minus, Byte.zero...Byte.nine: return .number(try number())
        default: throw fail(.unexpectedByte)
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        for offset in 0..<count {
            guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
            guard bytes[position] == start[offset] else { throw fail(.unexpectedByte) }
            position += 1
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= maxDepth else { throw fail(.tooDeep) }
        position += 1  // [
        var elements: [JSONValue] = []
        if closesAtOnce(Byte.closeBracket) { return elements }
        repeat {
            skipWhitespace()
            elements.append(try value(depth: depth))
        } while try continues(before: Byte.closeBracket)
        return elements
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONObject {
        guard depth <= maxDepth else { throw fail(.tooDeep) }
        position += 1  // {
        var object = JSONObject()
        if closesAtOnce(Byte.closeBrace) { return object }
        repeat {
            skipWhitespace()
            guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
            guard bytes[position] == Byte.quote else { throw fail(.unexpectedByte) }
            let keyOffset = position
            guard object.count < maxMembers else { throw JSONParseError(.tooManyMembers, at: keyOffset) }
            let key = try string()
            skipWhitespace()
            guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
            guard bytes[position] == Byte.colon else { throw fail(.unexpectedByte) }
            position += 1
            skipWhitespace()
            let value = try value(depth: depth)
            guard object.append(key, value) else { throw JSONParseError(.duplicateKey, at: keyOffset) }
        } while try continues(before: Byte.closeBrace)
        return object
    }

    /// Just inside a `[` or `{`: whether the container is empty (its `closer`, consumed).
    mutating func closesAtOnce(_ closer: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == closer else { return false }
        position += 1
        return true
    }

    /// After an element or member: whether another follows (a comma, consumed)
    /// or the container ends (its `closer`, consumed); anything else is an error.
    mutating func continues(before closer: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
        switch bytes[position] {
        case Byte.comma:
            position += 1
            return true
        case closer:
            position += 1
            return false
        default: throw fail(.unexpectedByte)
        }
    }

    // MARK: strings

    /// At the opening quote. Strings without escapes become a `String` straight
    /// from the input bytes; only non-ASCII ones need a UTF-8 check.
    mutating func string() throws(JSONParseError) -> String {
        position += 1  // "
        let start = position
        let count = bytes.count
        var index = start
        var highBits: UInt64 = 0
        // Eight bytes at a time while none needs a look (event payloads are
        // kilobytes of base64); the byte loop below finds which one does.
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while index + 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if mayEndPlainRun(word) { break }
                highBits |= word
                index += 8
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte == Byte.quote {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if highBits & 0x8080_8080_8080_8080 != 0, let bad = invalidUTF8Offset(run) {
                    throw JSONParseError(.invalidUTF8, at: start + bad)
                }
                position = index + 1
                return String(decoding: run, as: UTF8.self)
            }
            if byte == Byte.backslash {
                position = index
                return try escapedString(from: start)
            }
            if byte < 0x20 { throw JSONParseError(.controlCharacter, at: index) }
            highBits |= UInt64(byte)
            index += 1
        }
        position = index
        throw JSONParseError(.unexpectedEnd, at: position)
    }

    /// The slow path, from the first backslash: decodes into `scratch`.
    mutating func escapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while position < bytes.count {
            let byte = bytes[position]
            if byte == Byte.quote || byte == Byte.backslash {
                try appendRaw(runStart..<position)
                if byte == Byte.quote {
                    position += 1
                    return String(decoding: scratch, as: UTF8.self)
                }
                try escape()
                runStart = position
                continue
            }
            if byte < 0x20 { throw JSONParseError(.controlCharacter, at: position) }
            position += 1
        }
        throw JSONParseError(.unexpectedEnd, at: position)
    }

    /// Appends unescaped input bytes, checking them as UTF-8 (a multi-byte
    /// sequence cannot straddle an escape, since `\` is not a continuation byte).
    mutating func appendRaw(_ range: Range<Int>) throws(JSONParseError) {
        guard !range.isEmpty else { return }
        let run = UnsafeBufferPointer(rebasing: bytes[range])
        if let bad = invalidUTF8Offset(run) { throw JSONParseError(.invalidUTF8, at: range.lowerBound + bad) }
        scratch.append(contentsOf: run)
    }

    /// At a backslash.
    mutating func escape() throws(JSONParseError) {
        let escapeOffset = position
        position += 1
        guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
        let letter = bytes[position]
        position += 1
        switch letter {
        case Byte.quote, Byte.backslash, Byte.slash: scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try hex4()
            var scalar = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                guard position + 1 < bytes.count, bytes[position] == Byte.backslash, bytes[position + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(.loneSurrogate, at: escapeOffset)
                }
                position += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.loneSurrogate, at: escapeOffset) }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONParseError(.loneSurrogate, at: escapeOffset)
            default: break
            }
            appendUTF8(scalar)
        default:
            throw JSONParseError(.invalidEscape, at: escapeOffset)
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case Byte.zero...Byte.nine: digit = byte - Byte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidEscape, at: position)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: numbers

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func number() throws(JSONParseError) -> JSONNumber {
        let start = position
        let negative = bytes[position] == Byte.minus
        if negative { position += 1 }
        guard position < bytes.count else { throw JSONParseError(.invalidNumber, at: start) }

        let integerStart = position
        switch bytes[position] {
        case Byte.zero:
            position += 1
            if position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) { throw JSONParseError(.leadingZero, at: start) }
        case Byte.zero + 1...Byte.nine:
            while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) { position += 1 }
        default:
            throw JSONParseError(.invalidNumber, at: start)
        }
        let integerEnd = position

        var fractionEnd = position
        if position < bytes.count, bytes[position] == Byte.dot {
            position += 1
            let digits = position
            while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) { position += 1 }
            guard position > digits else { throw JSONParseError(.invalidNumber, at: start) }
            fractionEnd = position
        }

        var exponent = 0
        var hasExponent = false
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            hasExponent = true
            position += 1
            var exponentNegative = false
            if position < bytes.count, bytes[position] == Byte.minus || bytes[position] == Byte.plus {
                exponentNegative = bytes[position] == Byte.minus
                position += 1
            }
            let digits = position
            while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) {
                // Saturates: any exponent this large gives 0 or out of range anyway.
                exponent = min(exponent * 10 + Int(bytes[position] - Byte.zero), 1_000_000)
                position += 1
            }
            guard position > digits else { throw JSONParseError(.invalidNumber, at: start) }
            if exponentNegative { exponent = -exponent }
        }

        // The common case: a plain integer of at most 18 digits is exact in Int64.
        if fractionEnd == integerEnd, !hasExponent, integerEnd - integerStart <= 18 {
            var value: Int64 = 0
            for index in integerStart..<integerEnd { value = value * 10 + Int64(bytes[index] - Byte.zero) }
            if negative { value = -value }
            return JSONNumber(integer: value, double: negative && value == 0 ? -0.0 : Double(value))
        }

        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
        let integer = exactInteger(
            negative: negative, integerDigits: integerStart..<integerEnd,
            fractionDigits: integerEnd == fractionEnd ? integerEnd..<integerEnd : (integerEnd + 1)..<fractionEnd, exponent: exponent)
        return JSONNumber(integer: integer, double: double)
    }

    /// The number's value if it is a whole number within `Int64`, worked out
    /// from the decimal digits so that no rounding can make 2.5 look whole.
    func exactInteger(negative: Bool, integerDigits: Range<Int>, fractionDigits: Range<Int>, exponent: Int) -> Int64? {
        var digits = Array(bytes[integerDigits]) + Array(bytes[fractionDigits])
        var scale = exponent - fractionDigits.count
        while let first = digits.first, first == Byte.zero { digits.removeFirst() }
        if digits.isEmpty { return 0 }
        while let last = digits.last, last == Byte.zero {
            digits.removeLast()
            scale += 1
        }
        guard scale >= 0, digits.count + scale <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for digit in digits + Array(repeating: Byte.zero, count: scale) {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - Byte.zero))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}

/// Offset of the first byte that does not belong to well-formed UTF-8
/// (overlong forms, surrogates and code points above U+10FFFF included), or nil.
/// Whether any of the eight bytes is a quote, a backslash or a control
/// character (the SWAR zero-byte and less-than tests: exact about whether
/// such a byte exists, not about where).
@inline(__always)
func mayEndPlainRun(_ word: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high: UInt64 = 0x8080_8080_8080_8080
    let control = (word &- ones &* 0x20) & ~word & high
    let quote = word ^ (ones &* 0x22)
    let backslash = word ^ (ones &* 0x5C)
    return (control | ((quote &- ones) & ~quote & high) | ((backslash &- ones) & ~backslash & high)) != 0
}

func invalidUTF8Offset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    var index = 0
    let count = bytes.count
    while index < count {
        let lead = bytes[index]
        if lead < 0x80 {
            index += 1
            continue
        }
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: return index
        }
        guard index + length <= count, secondRange.contains(bytes[index + 1]) else { return index }
        for continuation in 2..<length where bytes[index + continuation] & 0xC0 != 0x80 { return index }
        index += length
    }
    return nil
}
