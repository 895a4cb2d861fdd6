/// The keys of one map seen so far, to refuse a duplicate.
///
/// Keys compare as encoded data items in preferred form (RFC 8949 §4.1), not
/// as Swift values: String equality is Unicode-canonical, so "K" and KELVIN
/// SIGN would collide, while 1 written as `01` or `18 01` must. A key that is
/// already in preferred form (nearly every real key: a short text or integer)
/// is compared by its received bytes, without copying them; any other key is
/// re-encoded once.
struct MapKeySet {
    /// Up to this many keys a linear scan beats hashing; maps in mdocs have fewer.
    private static let linearLimit = 16

    private var keys: [ArraySlice<UInt8>] = []
    private var hashed: Set<KeyBytes>?

    /// False when an equal key was inserted before.
    mutating func insert(_ key: CBORItem) -> Bool {
        let identity = Self.identity(of: key)
        if hashed == nil {
            for seen in keys where seen.count == identity.count && bytesEqual(seen, identity) { return false }
            keys.append(identity)
            if keys.count > Self.linearLimit {
                hashed = Set(keys.map(KeyBytes.init))
                keys = []
            }
            return true
        }
        return hashed!.insert(KeyBytes(bytes: identity)).inserted
    }

    /// The key's preferred encoding: its received bytes when they already are.
    static func identity(of key: CBORItem) -> ArraySlice<UInt8> {
        let encoded = key.encoded
        let additional = encoded[encoded.startIndex] & 0x1f
        let preferred: Bool
        switch key.content {
        case .unsigned(let value), .negative(let value):
            preferred = headLength(additional: additional) == preferredHeadLength(value)
        case .bytes(let bytes):
            preferred = additional != 31 && headLength(additional: additional) == preferredHeadLength(UInt64(bytes.count))
        case .text(let text):
            preferred = additional != 31 && headLength(additional: additional) == preferredHeadLength(UInt64(text.utf8.count))
        case .bool, .null, .undefined, .simple:
            // One encoding each: a two-byte simple value below 32 is refused by the reader.
            preferred = true
        case .array, .map, .tagged, .float:
            preferred = false
        }
        return preferred ? encoded : key.value.encoded()[...]
    }

    /// Bytes of a definite head with this additional information (not 28–31).
    private static func headLength(additional: UInt8) -> Int {
        switch additional {
        case 0..<24: 1
        case 24: 2
        case 25: 3
        case 26: 5
        default: 9
        }
    }

    private static func preferredHeadLength(_ argument: UInt64) -> Int {
        switch argument {
        case 0..<24: 1
        case 24...0xff: 2
        case 0x100...0xffff: 3
        case 0x1_0000...0xffff_ffff: 5
        default: 9
        }
    }
}

/// Key bytes hashed as a block, without copying them out of the input.
private struct KeyBytes: Hashable {
    let bytes: ArraySlice<UInt8>

    static func == (lhs: KeyBytes, rhs: KeyBytes) -> Bool {
        lhs.bytes.count == rhs.bytes.count && bytesEqual(lhs.bytes, rhs.bytes)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

private func bytesEqual(_ lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
    lhs.withUnsafeBufferPointer { left in
        rhs.withUnsafeBufferPointer { right in
            guard left.count == right.count else { return false }
            for index in 0..<left.count where left[index] != right[index] { return false }
            return true
        }
    }
}
