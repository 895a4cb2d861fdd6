extension TestIssuer {
    /// A reproducible pseudo-random generator (xoshiro256**, seeded through
    /// SplitMix64) for fixture *contents*: element values, salts, digest IDs,
    /// nonces and event ids. Reproducible corpora need this; secrets must not use
    /// it, which is why every key in this module comes from OpenSSL instead.
    public struct SeededRandom: RandomNumberGenerator, Sendable {
        private var state: (UInt64, UInt64, UInt64, UInt64)

        public init(seed: UInt64) {
            // SplitMix64 spreads any seed (0 included) over the whole state, as
            // xoshiro's authors recommend: an all-zero state would stay zero.
            var mixer = seed
            func splitMix() -> UInt64 {
                mixer &+= 0x9E37_79B9_7F4A_7C15
                var z = mixer
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
            state = (splitMix(), splitMix(), splitMix(), splitMix())
        }

        public mutating func next() -> UInt64 {
            let result = rotateLeft(state.1 &* 5, 7) &* 9
            let shifted = state.1 << 17
            state.2 ^= state.0
            state.3 ^= state.1
            state.1 ^= state.2
            state.0 ^= state.3
            state.2 ^= shifted
            state.3 = rotateLeft(state.3, 45)
            return result
        }

        private func rotateLeft(_ value: UInt64, _ count: UInt64) -> UInt64 {
            (value << count) | (value >> (64 - count))
        }
    }
}

extension RandomNumberGenerator {
    /// `count` bytes from this generator.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }

    /// A random (version 4 layout) UUID string, for event ids.
    public mutating func uuidString() -> String {
        var raw = bytes(16)
        raw[6] = raw[6] & 0x0f | 0x40
        raw[8] = raw[8] & 0x3f | 0x80
        let hex = raw.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
        let characters = Array(hex)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
        return groups.joined(separator: "-")
    }
}
