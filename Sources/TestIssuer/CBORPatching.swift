import CBOR

/// Edits of already-built structures, for fixtures that tamper with something
/// after it was sealed or signed (the way an attacker or a broken transport would).
extension CBOR {
    /// The value under `key` of a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// A map with the value under `key` replaced; other values are unchanged.
    public func replacing(_ key: CBOR, with value: CBOR) -> CBOR {
        guard case .map(var entries) = self, let index = entries.firstIndex(where: { $0.key == key }) else { return self }
        entries[index].value = value
        return .map(entries)
    }

    /// A map with `value` under `key`: replaced where the key is, appended where it is not.
    public func setting(_ key: CBOR, to value: CBOR) -> CBOR {
        guard case .map(let entries) = self else { return self }
        if entries.contains(where: { $0.key == key }) { return replacing(key, with: value) }
        return .map(entries + [MapEntry(key, value)])
    }

    /// An array (or tagged array, as COSE messages may be) with element `index` transformed.
    func mappingCOSEPart(_ index: Int, _ transform: (CBOR) -> CBOR) -> CBOR {
        switch self {
        case .tagged(let tag, let inner):
            return .tagged(tag, inner.mappingCOSEPart(index, transform))
        case .array(var parts) where parts.indices.contains(index):
            parts[index] = transform(parts[index])
            return .array(parts)
        default:
            return self
        }
    }
}

/// `bytes` with one bit of byte `index` flipped.
func flippingBit(_ bytes: [UInt8], at index: Int) -> [UInt8] {
    var copy = bytes
    copy[index] ^= 0x01
    return copy
}
