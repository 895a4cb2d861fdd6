import Foundation

/// Strict base64 for event fields: one alphabet per field, no whitespace, no
/// mixing of the standard and URL-safe alphabets. Ambiguity here would let two
/// different strings name the same payload.
///
/// Decoded over the UTF-8 bytes with a lookup table: payloads are several
/// kilobytes per event, and walking them as `Character`s would cost more than
/// the cryptography.
public enum Base64 {
    /// RFC 4648 §4, padding required.
    public static func decodeStandard(_ text: String) -> [UInt8]? {
        decode(text, alphabet: standardTable, shifted: standardShifted, requirePadding: true)
    }

    /// RFC 4648 §5, padding optional (the Digital Credentials API omits it).
    public static func decodeURL(_ text: String) -> [UInt8]? {
        decode(text, alphabet: urlTable, shifted: urlShifted, requirePadding: false)
    }

    /// RFC 7515 §2 base64url, the form of JWS and JWE segments and JWK
    /// members: the URL-safe alphabet with no padding at all. A padded text
    /// spells the same bytes a second way, so it is refused.
    public static func decodeURLUnpadded(_ text: String) -> [UInt8]? {
        guard !text.utf8.contains(UInt8(ascii: "=")) else { return nil }
        return decodeURL(text)
    }

    /// The same over bytes (a JSON string's content in the record, undecoded).
    public static func decodeStandard(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(text, alphabet: standardTable, shifted: standardShifted, requirePadding: true)
    }

    public static func decodeURL(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(text, alphabet: urlTable, shifted: urlShifted, requirePadding: false)
    }

    public static func encodeStandard(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    /// RFC 4648 §5 without padding (JWS, RFC 7515 §2), written straight into
    /// bytes: rewriting the standard form Character by Character cost a
    /// seventh of signing a reader token.
    public static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        let alphabet = urlAlphabet
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(group >> 18)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(alphabet[Int(group >> 6 & 0x3F)])
            out.append(alphabet[Int(group & 0x3F)])
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let group = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            out.append(alphabet[Int(group >> 18)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            if rest == 2 { out.append(alphabet[Int(group >> 6 & 0x3F)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let invalid: UInt8 = 0xff

    private static func table(_ last: (UInt8, UInt8)) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [last.0, last.1]
        for (value, letter) in letters.enumerated() { table[Int(letter)] = UInt8(value) }
        return table
    }

    /// One table per position in a group of four, each value already shifted
    /// to its place in the 24-bit group; an invalid character sets bit 24.
    private static func shiftedTables(_ table: [UInt8]) -> [UInt32] {
        var shifted = [UInt32](repeating: 0, count: 4 * 256)
        for position in 0..<4 {
            for character in 0..<256 {
                let value = table[character]
                shifted[position * 256 + character] = value == invalid ? badCharacter : UInt32(value) << (18 - 6 * position)
            }
        }
        return shifted
    }

    private static let badCharacter: UInt32 = 1 << 24
    private static let standardTable = table((UInt8(ascii: "+"), UInt8(ascii: "/")))
    private static let urlTable = table((UInt8(ascii: "-"), UInt8(ascii: "_")))
    private static let standardShifted = shiftedTables(standardTable)
    private static let urlShifted = shiftedTables(urlTable)

    private static func decode(_ text: String, alphabet: [UInt8], shifted: [UInt32], requirePadding: Bool) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0, alphabet: alphabet, shifted: shifted, requirePadding: requirePadding) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, alphabet: [UInt8], shifted: [UInt32], requirePadding: Bool) -> [UInt8]? {
        alphabet.withUnsafeBufferPointer { table in
            shifted.withUnsafeBufferPointer { shifted in decode(input, table: table, shifted: shifted, requirePadding: requirePadding) }
        }
    }

    /// Four characters at a time into three bytes written straight into the
    /// result's storage: a byte-at-a-time accumulator with `append` would be a
    /// large part of a whole verification. Each character's table entry is
    /// already in place, so a group is four lookups OR-ed together.
    private static func decode(_ input: UnsafeBufferPointer<UInt8>, table: UnsafeBufferPointer<UInt8>, shifted: UnsafeBufferPointer<UInt32>,
                               requirePadding: Bool) -> [UInt8]? {
        var length = input.count
        var padding = 0
        while padding < 2, length > 0, input[length - 1] == UInt8(ascii: "=") {
            length -= 1
            padding += 1
        }
        if requirePadding || padding > 0 {
            guard (length + padding) % 4 == 0 else { return nil }
        }
        let tail = length % 4
        guard tail != 1 else { return nil }
        let groups = length / 4
        let outputCount = groups * 3 + (tail == 0 ? 0 : tail - 1)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            guard let out = buffer.baseAddress, let base = input.baseAddress, let d0 = shifted.baseAddress else {
                initialized = 0
                return
            }
            let d1 = d0 + 256, d2 = d0 + 512, d3 = d0 + 768
            // Invalid characters set bit 24; OR-ing every group and testing
            // once at the end keeps the loop free of branches.
            var seen: UInt32 = 0
            var read = 0
            var written = 0
            // Two groups a round, each stored as one 4-byte word (its 3 bytes
            // big-endian, then a byte the next group overwrites), while a
            // later group is left to overwrite it: per byte, this loop is
            // most of what reading an event costs.
            let target = UnsafeMutableRawPointer(out)
            var group = 0
            while group + 2 < groups {
                let first = d0[Int(base[read])] | d1[Int(base[read + 1])] | d2[Int(base[read + 2])] | d3[Int(base[read + 3])]
                let second = d0[Int(base[read + 4])] | d1[Int(base[read + 5])] | d2[Int(base[read + 6])] | d3[Int(base[read + 7])]
                seen |= first | second
                target.storeBytes(of: (first << 8).bigEndian, toByteOffset: written, as: UInt32.self)
                target.storeBytes(of: (second << 8).bigEndian, toByteOffset: written + 3, as: UInt32.self)
                read += 8
                written += 6
                group += 2
            }
            while group < groups {
                let word = d0[Int(base[read])] | d1[Int(base[read + 1])] | d2[Int(base[read + 2])] | d3[Int(base[read + 3])]
                seen |= word
                out[written] = UInt8(truncatingIfNeeded: word >> 16)
                out[written + 1] = UInt8(truncatingIfNeeded: word >> 8)
                out[written + 2] = UInt8(truncatingIfNeeded: word)
                read += 4
                written += 3
                group += 1
            }
            var tailSeen: UInt8 = 0
            if tail > 0 {
                let a = table[Int(base[read])], b = table[Int(base[read + 1])]
                let c = tail == 3 ? table[Int(base[read + 2])] : 0
                tailSeen = a | b | c
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                out[written] = UInt8(truncatingIfNeeded: word >> 16)
                if tail == 3 { out[written + 1] = UInt8(truncatingIfNeeded: word >> 8) }
                // The unused low bits of the last character must be zero (canonical encoding).
                let unused: UInt32 = tail == 3 ? 0xff : 0xffff
                if tailSeen & 0x80 == 0, word & unused != 0 { tailSeen |= 0x80 }
            }
            valid = seen & badCharacter == 0 && tailSeen & 0x80 == 0
            initialized = outputCount
        }
        return valid ? output : nil
    }
}
