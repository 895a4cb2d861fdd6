/// Why a text is not JSON, and at which byte. Never quotes the input: events
/// carry personal data, and errors end up in logs.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, Equatable {
        case unexpectedEnd = "unexpected end of input"
        case unexpectedByte = "unexpected byte"
        case trailingData = "data after the JSON value"
        case invalidNumber = "invalid number"
        case leadingZero = "number with a leading zero"
        case numberOutOfRange = "number out of range"
        case invalidEscape = "invalid escape sequence"
        case loneSurrogate = "unpaired UTF-16 surrogate escape"
        case invalidUTF8 = "invalid UTF-8"
        case controlCharacter = "unescaped control character in a string"
        case tooDeep = "nesting too deep"
        case tooManyMembers = "an object with more members than allowed"
        case duplicateKey = "duplicate object key"
    }

    public let reason: Reason
    /// Byte offset into the input where the problem was found.
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "JSON: \(reason.rawValue) at byte \(offset)" }
}
