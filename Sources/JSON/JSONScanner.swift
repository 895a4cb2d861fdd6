#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pull reader for hot paths that know the shape of the document they
/// expect (the request event): it hands out tokens one at a time, as strict
/// as `JSONParser` about everything it accepts, and simply fails (nil or
/// false) on anything it does not handle — an escape in a string, say. Its
/// caller then gives the whole document to `JSONParser`, which alone decides
/// what is wrong with it; so a reader built on this must accept nothing the
/// parser refuses, and may refuse whatever it likes.
///
/// Whitespace is skipped before every token, as the grammar allows.
public struct JSONScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// As `JSONParser`'s: containers open at once, counting the top level's as 1.
    public let maxDepth: Int
    /// As `JSONParser`'s, for the values the scanner reads whole (`value(depth:)`).
    public let maxMembers: Int

    public init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONParser().maxDepth, maxMembers: Int = .max) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.maxMembers = maxMembers
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// Consumes `byte` if it is the next token (`{ } [ ] : ,`).
    public mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Whether only whitespace is left.
    public mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return position == bytes.count
    }

    /// A string without escapes, as its bytes between the quotes (checked as
    /// the parser checks them: UTF-8, no control characters); nil if the next
    /// token is not such a string.
    public mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let base = UnsafeRawPointer(bytes.baseAddress) else { return nil }
        let start = position + 1
        var index = start
        var highBits: UInt64 = 0
        while index + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if mayEndPlainRun(word) { break }
            highBits |= word
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if highBits & 0x8080_8080_8080_8080 != 0, invalidUTF8Offset(run) != nil { return nil }
                position = index + 1
                return run
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            highBits |= UInt64(byte)
            index += 1
        }
        return nil
    }

    /// A string, escapes and all: plain text straight from the bytes, and
    /// from the first backslash on as the parser reads it.
    public mutating func string() -> String? {
        skipWhitespace()
        let start = position
        if let run = plainString() { return String(decoding: run, as: UTF8.self) }
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var reader = JSONReader(bytes, maxDepth: maxDepth, maxMembers: maxMembers)
        reader.position = start
        do throws(JSONParseError) {
            let text = try reader.string()
            position = reader.position
            return text
        } catch {
            return nil
        }
    }

    /// A whole number from 1 to 10^15 − 1 written as plain digits (no sign,
    /// fraction, exponent or leading zero); nil for any other token, valid
    /// numbers included.
    public mutating func positiveInteger() -> Int? {
        skipWhitespace()
        var index = position
        var value = 0
        while index < bytes.count, index - position < 16, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
            value = value * 10 + Int(digit)
            index += 1
        }
        let digits = index - position
        guard digits > 0, digits < 16, bytes[position] != UInt8(ascii: "0") else { return nil }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        position = index
        return value
    }

    /// The bytes between a string's quotes, found with `memchr` and NOT
    /// checked: only for a caller that refuses the result unless every byte
    /// is in an alphabet without `\`, control characters and non-ASCII bytes
    /// (base64), which makes the string plain and these bytes its content.
    public mutating func uncheckedString() -> UnsafeBufferPointer<UInt8>? {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let base = bytes.baseAddress else { return nil }
        let start = position + 1
        guard let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), bytes.count - start) else { return nil }
        let end = start + (UnsafeRawPointer(quote) - UnsafeRawPointer(base + start))
        position = end + 1
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Any value, read by the parser's own rules as a member of a container
    /// at nesting `depth`; nil where the parser would throw.
    public mutating func value(depth: Int) -> JSONValue? {
        skipWhitespace()
        var reader = JSONReader(bytes, maxDepth: maxDepth, maxMembers: maxMembers)
        reader.position = position
        do throws(JSONParseError) {
            let value = try reader.value(depth: depth)
            position = reader.position
            return value
        } catch {
            return nil
        }
    }
}
