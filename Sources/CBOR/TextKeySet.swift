/// Keys (as their bytes) seen so far in one map, to refuse a duplicate in
/// time linear in the map: a few are scanned, more are hashed. For readers
/// that walk a map by hand; `MapKeySet` does the same for decoded items.
public struct TextKeySet {
    /// Up to this many keys a scan beats hashing; the maps in mdocs have fewer.
    @usableFromInline static let linearLimit = 16

    @usableFromInline var few: [ArraySlice<UInt8>] = []
    @usableFromInline var many: Set<HashedBytes>?

    public init() {}

    /// False (and no change) when `key` is already in the set.
    @inlinable
    public mutating func insert(_ key: ArraySlice<UInt8>) -> Bool {
        if many == nil {
            if few.count < Self.linearLimit {
                for earlier in few where earlier.elementsEqual(key) { return false }
                few.append(key)
                return true
            }
            many = Set(few.map(HashedBytes.init))
            few = []
        }
        return many!.insert(HashedBytes(key)).inserted
    }
}

/// Bytes hashed and compared as a block.
@usableFromInline
struct HashedBytes: Hashable {
    @usableFromInline let bytes: ArraySlice<UInt8>

    @usableFromInline init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    @usableFromInline static func == (lhs: HashedBytes, rhs: HashedBytes) -> Bool {
        lhs.bytes.elementsEqual(rhs.bytes)
    }

    @usableFromInline func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
