import CBOR

/// Reads the identifier list claim (65530, ISO 18013-5 §12.3.6.4):
/// `{"identifiers": {* bstr => IdentifierInfo}, ? "aggregation_uri": tstr}`.
/// Other keys, of the claim and of each IdentifierInfo map, are ignored
/// (reserved for future use).
enum IdentifierListClaim {
    /// In place, with the cursor at the claim's value: the identifiers stay
    /// slices of the payload and no item tree of millions of entries is
    /// built. Nil when the cursor meets an encoding it does not read
    /// (indefinite lengths, a non-text key); the caller then decodes the
    /// whole claims set, which refuses it with the precise reason or reads
    /// it with `read(_:limits:)`.
    static func readInPlace(_ cursor: inout CBORCursor, limits: ListLimits) throws(StatusListError) -> (IdentifierSet, String?)? {
        guard let count = cursor.mapCount() else { return nil }
        var identifiers: IdentifierSet?
        var aggregationURI: String?
        var failure: StatusListError?
        let read = cursor.forEachTextKey(count: count, depth: 2) { cursor, key in
            if key.isUTF8("identifiers") {
                do throws(StatusListError) {
                    guard identifiers == nil, let set = try readIdentifiersInPlace(&cursor, limits: limits) else { return .refused }
                    identifiers = set
                    return .read
                } catch {
                    failure = error
                    return .refused
                }
            }
            if key.isUTF8("aggregation_uri") {
                guard aggregationURI == nil, let text = cursor.text() else { return .refused }
                aggregationURI = text
                return .read
            }
            return .other
        }
        if let failure { throw failure }
        guard read else { return nil }
        guard let identifiers else { throw .claims("the identifier list claim has no identifiers") }
        return (identifiers, aggregationURI)
    }

    private static func readIdentifiersInPlace(_ cursor: inout CBORCursor, limits: ListLimits) throws(StatusListError) -> IdentifierSet? {
        guard let count = cursor.mapCount() else { return nil }
        // Refused before any room is made for them.
        guard count <= limits.maxIdentifiers else { throw .claims("the identifier list holds more than \(limits.maxIdentifiers) identifiers") }
        var builder = IdentifierSet.Builder(storage: cursor.input, capacity: count, limits: limits)
        for _ in 0..<count {
            guard let id = cursor.bytes(), let info = cursor.item(depth: 3) else { return nil }
            try builder.insert(id.startIndex..<id.endIndex, infoIsMap: info.entries != nil)
        }
        return builder.build()
    }

    /// From the decoded claim, when the in-place read gave way.
    static func read(_ item: CBORItem, limits: ListLimits) throws(StatusListError) -> (IdentifierSet, String?) {
        guard let entries = item.entries else { throw .claims("the identifier list claim is not a map") }
        var identifiers: IdentifierSet?
        var aggregationURI: String?
        for entry in entries {
            if entry.hasTextKey("identifiers") {
                guard let map = entry.value.entries else { throw .claims("identifiers is not a map") }
                guard map.count <= limits.maxIdentifiers else { throw .claims("the identifier list holds more than \(limits.maxIdentifiers) identifiers") }
                // Copied into one buffer: an indefinite-length byte string is
                // a fresh array of its own, not a slice of the payload.
                var storage: [UInt8] = []
                var ranges: [Range<Int>] = []
                ranges.reserveCapacity(map.count)
                for identifier in map {
                    guard let id = identifier.key.bytes else { throw .claims("an identifier is not a byte string") }
                    let start = storage.count
                    storage.append(contentsOf: id)
                    ranges.append(start..<storage.count)
                }
                var builder = IdentifierSet.Builder(storage: storage[...], capacity: map.count, limits: limits)
                for (range, identifier) in zip(ranges, map) {
                    try builder.insert(range, infoIsMap: identifier.value.entries != nil)
                }
                identifiers = builder.build()
            } else if entry.hasTextKey("aggregation_uri") {
                guard let text = entry.value.text else { throw .claims("identifier list aggregation_uri is not a text string") }
                aggregationURI = text
            }
        }
        guard let identifiers else { throw .claims("the identifier list claim has no identifiers") }
        return (identifiers, aggregationURI)
    }
}
