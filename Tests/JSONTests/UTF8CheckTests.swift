import JSON
import Testing

@Suite struct UTF8CheckTests {
    /// Every answer agrees with the standard library's validator, with the
    /// interesting byte at each offset around the 8-byte fast path.
    @Test func agreesWithTheStandardValidator() {
        let insertions: [[UInt8]] = [
            [0xC3, 0xA9],              // é
            [0xF0, 0x9F, 0x8E, 0x89],  // 🎉
            [0xC3],                    // truncated sequence
            [0xFF],                    // never valid
            [0xED, 0xA0, 0x80],        // encoded surrogate
            [0xC0, 0xAF],              // overlong "/"
            [0x80],                    // lone continuation byte
        ]
        for insertion in insertions {
            for offset in 0...17 {
                for tail in [0, 1, 9] {
                    let bytes = Array(repeating: UInt8(ascii: "a"), count: offset) + insertion + Array(repeating: UInt8(ascii: "z"), count: tail)
                    let expected = String(validating: bytes, as: UTF8.self) != nil
                    #expect(isValidUTF8(bytes) == expected, "\(insertion) at \(offset), tail \(tail)")
                }
            }
        }
        #expect(isValidUTF8([]))
        #expect(isValidUTF8(Array("{\"id\":\"x\"}".utf8)))
        #expect(!isValidUTF8(Array(repeating: UInt8(ascii: "a"), count: 64) + [0xFF]))
    }
}
