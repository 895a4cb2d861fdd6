/// Whether `bytes` are UTF-8, without building a `String` of them: event
/// records are nearly always ASCII JSON, which is checked eight bytes at a
/// time, and only the part from the first non-ASCII byte goes to the full
/// validator.
public func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    let asciiPrefix = bytes.withUnsafeBytes { raw in
        var index = 0
        while index + 8 <= raw.count, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            index += 8
        }
        while index < raw.count, raw[index] < 0x80 { index += 1 }
        return index
    }
    // Everything before the first non-ASCII byte is ASCII, so it starts a character.
    return asciiPrefix == bytes.count || String(validating: bytes[asciiPrefix...], as: UTF8.self) != nil
}
