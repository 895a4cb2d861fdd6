import Crypto
import Storage

/// `X-Request-Id`: the id that links a client's call to serve's log line.
/// A client's own is kept when it is a plain token (what proxies and
/// tracing libraries send); anything else is replaced, so a header cannot
/// put arbitrary text into the log or the answer.
enum RequestID {
    static let maxLength = 128

    /// The client's id when it is 1 to 128 of `A-Z a-z 0-9 . _ : -`, else a fresh one.
    static func accept(_ header: String?) -> String {
        if let header, (1...maxLength).contains(header.utf8.count), header.utf8.allSatisfy(isAllowed) { return header }
        return generate()
    }

    /// 16 random bytes in lowercase hex.
    static func generate() -> String { lowercaseHex(secureRandomBytes(16)) }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
    }
}
