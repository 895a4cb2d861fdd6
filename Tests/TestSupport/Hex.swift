/// Lowercase or uppercase hex (whitespace ignored) to bytes; test inputs only.
public func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }.utf8.map { byte -> UInt8 in
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: fatalError("not a hex digit in test data")
        }
    }
    precondition(digits.count % 2 == 0, "odd-length hex in test data")
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

/// Bytes as lowercase hex.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { byte in
        let text = String(byte, radix: 16)
        return byte < 16 ? "0" + text : text
    }.joined()
}
