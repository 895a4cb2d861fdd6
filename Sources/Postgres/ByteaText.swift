/// Decodes bytea's text output. Results are requested in text format (one format
/// for every column keeps `PostgresResult` simple), so bytea arrives either as
/// hex (`\x00ff…`, the default since 9.0) or, if the server sets
/// `bytea_output = escape`, as printable bytes with `\\` and `\ooo` escapes.
enum ByteaText {
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let backslash = UInt8(ascii: "\\")
        if text.count >= 2, text.first == backslash, text[text.startIndex + 1] == UInt8(ascii: "x") {
            return decodeHex(text.dropFirst(2))
        }
        return decodeEscape(text)
    }

    private static func decodeHex(_ hex: ArraySlice<UInt8>) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func decodeEscape(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let backslash = UInt8(ascii: "\\")
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            guard byte == backslash else { out.append(byte); index += 1; continue }
            if index + 1 < text.endIndex, text[index + 1] == backslash {
                out.append(backslash); index += 2; continue
            }
            guard index + 3 < text.endIndex else { return nil }
            var value: UInt16 = 0
            for offset in 1...3 {
                let digit = text[index + offset]
                guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
                value = value * 8 + UInt16(digit - UInt8(ascii: "0"))
            }
            guard value <= 255 else { return nil }
            out.append(UInt8(value))
            index += 4
        }
        return out
    }
}
