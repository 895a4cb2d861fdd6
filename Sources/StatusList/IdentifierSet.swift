/// The identifiers of an identifier list (ISO 18013-5 §12.3.6.4): a document
/// whose MSO names one of them is revoked. Matching is exact byte equality.
///
/// A list may hold millions of identifiers, so they are not copied into
/// arrays of their own: the set keeps the bytes they were read from (the
/// token's payload) and an open-addressing table of where each one lies,
/// eight bytes a slot at most half full. Lookups hash with Swift's `Hasher`,
/// which is seeded per process, so a list cannot be built to collide.
public struct IdentifierSet: Sendable {
    /// The bytes the identifiers are slices of.
    let storage: ArraySlice<UInt8>
    /// Per slot 0 (empty) or `(start + 1) << 8 | length`, `start` an index of `storage`.
    let slots: [UInt64]
    public let count: Int
    /// Bytes held: the identifiers' bytes and the table.
    public var memoryBytes: Int { storage.count + slots.count * 8 }

    /// Whether `id` is one of the identifiers, byte for byte.
    public func contains(_ id: some Collection<UInt8>) -> Bool {
        let bytes = Array(id)
        guard !slots.isEmpty, bytes.count < 256 else { return false }
        return bytes.withUnsafeBytes { wanted in
            storage.withUnsafeBytes { stored in
                let mask = slots.count - 1
                var slot = IdentifierSet.hash(wanted) & mask
                while slots[slot] != 0 {
                    let (start, length) = IdentifierSet.location(slots[slot])
                    if length == wanted.count, memEqual(stored, from: start - storage.startIndex, wanted) { return true }
                    slot = (slot + 1) & mask
                }
                return false
            }
        }
    }

    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }

    static func location(_ slot: UInt64) -> (start: Int, length: Int) {
        (Int(slot >> 8) - 1, Int(slot & 0xff))
    }

    /// Collects identifiers, slices of one storage, refusing duplicates.
    struct Builder {
        let storage: ArraySlice<UInt8>
        private var slots: [UInt64]
        private(set) var count = 0
        let limits: ListLimits

        /// Room for `capacity` identifiers, which the caller has checked against the limit.
        init(storage: ArraySlice<UInt8>, capacity: Int, limits: ListLimits) {
            self.storage = storage
            self.limits = limits
            // A power of two at least twice the count keeps probes short.
            var size = 16
            while size < 2 * capacity { size <<= 1 }
            slots = [UInt64](repeating: 0, count: size)
        }

        /// Adds the identifier at `range` of the storage. A duplicate is a
        /// duplicate map key, which strict CBOR refuses (`.token`).
        mutating func insert(_ range: Range<Int>, infoIsMap: Bool) throws(StatusListError) {
            // The slot keeps the length in 8 bits, so no limit lets a longer one in.
            let longest = min(limits.maxIdentifierLength, 255)
            guard range.count >= 1, range.count <= longest else {
                throw .claims("an identifier is empty or longer than \(longest) bytes")
            }
            guard infoIsMap else { throw .claims("an identifier's info is not a map") }
            guard count < limits.maxIdentifiers else { throw .claims("the identifier list holds more than \(limits.maxIdentifiers) identifiers") }
            if 2 * (count + 1) > slots.count { grow() }
            let inserted = storage.withUnsafeBytes { stored -> Bool in
                let base = storage.startIndex
                let wanted = UnsafeRawBufferPointer(rebasing: stored[(range.lowerBound - base)..<(range.upperBound - base)])
                let mask = slots.count - 1
                var slot = IdentifierSet.hash(wanted) & mask
                while slots[slot] != 0 {
                    let (start, length) = IdentifierSet.location(slots[slot])
                    if length == wanted.count, memEqual(stored, from: start - base, wanted) { return false }
                    slot = (slot + 1) & mask
                }
                slots[slot] = UInt64(range.lowerBound + 1) << 8 | UInt64(range.count)
                return true
            }
            guard inserted else { throw .token("the identifiers map has a duplicate key") }
            count += 1
        }

        /// Twice the slots, for a map whose head understated its count (an indefinite-length one).
        private mutating func grow() {
            let old = slots
            slots = [UInt64](repeating: 0, count: old.count * 2)
            let mask = slots.count - 1
            storage.withUnsafeBytes { stored in
                for entry in old where entry != 0 {
                    let (start, length) = IdentifierSet.location(entry)
                    let offset = start - storage.startIndex
                    var slot = IdentifierSet.hash(UnsafeRawBufferPointer(rebasing: stored[offset..<(offset + length)])) & mask
                    while slots[slot] != 0 { slot = (slot + 1) & mask }
                    slots[slot] = entry
                }
            }
        }

        func build() -> IdentifierSet {
            IdentifierSet(storage: storage, slots: slots, count: count)
        }
    }
}

/// Whether `stored` holds `wanted` at `offset`.
private func memEqual(_ stored: UnsafeRawBufferPointer, from offset: Int, _ wanted: UnsafeRawBufferPointer) -> Bool {
    guard offset >= 0, offset + wanted.count <= stored.count else { return false }
    for index in 0..<wanted.count where stored[offset + index] != wanted[index] { return false }
    return true
}
