import Foundation

/// Strict base64 for event fields: one alphabet per field, no whitespace, no
/// mixing of the standard and URL-safe alphabets. Ambiguity here would let two
/// different strings name the same payload.
///
/// Decoded over the UTF-8 bytes with a lookup table: payloads are several
/// kilobytes per event, and walking them as `Character`s cost more than the
/// cryptography.
enum Base64 {
    /// RFC 4648 §4, padding required.
    static func decodeStandard(_ text: String) -> [UInt8]? {
        decode(text, alphabet: standardTable, requirePadding: true)
    }

    /// RFC 4648 §5, padding optional (the Digital Credentials API omits it).
    static func decodeURL(_ text: String) -> [UInt8]? {
        decode(text, alphabet: urlTable, requirePadding: false)
    }

    static func encodeStandard(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        String(Data(bytes).base64EncodedString().compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
    }

    private static let invalid: UInt8 = 0xff

    private static func table(_ last: (UInt8, UInt8)) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [last.0, last.1]
        for (value, letter) in letters.enumerated() { table[Int(letter)] = UInt8(value) }
        return table
    }

    private static let standardTable = table((UInt8(ascii: "+"), UInt8(ascii: "/")))
    private static let urlTable = table((UInt8(ascii: "-"), UInt8(ascii: "_")))

    private static func decode(_ text: String, alphabet: [UInt8], requirePadding: Bool) -> [UInt8]? {
        var text = text
        return text.withUTF8 { input -> [UInt8]? in
            var length = input.count
            var padding = 0
            while padding < 2, length > 0, input[length - 1] == UInt8(ascii: "=") {
                length -= 1
                padding += 1
            }
            if requirePadding || padding > 0 {
                guard (length + padding) % 4 == 0 else { return nil }
            }
            guard length % 4 != 1 else { return nil }
            var output = [UInt8]()
            output.reserveCapacity(length / 4 * 3 + 2)
            var accumulator: UInt32 = 0
            var bits = 0
            for index in 0..<length {
                let value = alphabet[Int(input[index])]
                guard value != invalid else { return nil }
                accumulator = accumulator << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                }
            }
            // The unused low bits of the last character must be zero (canonical encoding).
            guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
            return output
        }
    }
}
