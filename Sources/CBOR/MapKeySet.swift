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

    /// Nil while every key so far was in preferred form and there are few:
    /// then the map's own entries are the set, and checking costs no allocation.
    private var hashed: Set<KeyBytes>?

    /// False when a key equal to `key` is among `earlier`, the map's entries so
    /// far (every one of which went through this set).
    mutating func insert(_ key: CBORItem, after earlier: [CBORItem.Entry]) -> Bool {
        let identity = Self.identity(of: key)
        if hashed == nil {
            if identity.isReceived && earlier.count < Self.linearLimit {
                // Earlier keys are all in preferred form, so their received bytes are their identities.
                for index in earlier.indices where bytesEqual(earlier[index].key.encoded, identity.bytes) { return false }
                return true
            }
            hashed = Set(earlier.map { KeyBytes(bytes: Self.identity(of: $0.key).bytes) })
        }
        return hashed!.insert(KeyBytes(bytes: identity.bytes)).inserted
    }

    /// The key's preferred encoding: its received bytes when they already are.
    static func identity(of key: CBORItem) -> (bytes: ArraySlice<UInt8>, isReceived: Bool) {
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
        return preferred ? (encoded, true) : (key.value.encoded()[...], false)
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
