import CBOR

/// One encoding per data item, for identities computed from structures a
/// submitter may re-encode: core deterministic encoding (RFC 8949 §4.2.1:
/// preferred serialization, definite lengths, map keys in bytewise order),
/// applied inside `#6.24(bstr .cbor …)` embeddings as well, since those hold
/// data items too (DeviceEngagementBytes, EReaderKeyBytes). Two encodings of
/// the same items give the same bytes; different items never do.
public enum CanonicalCBOR {
    /// The canonical encoding of `bytes`, which must be one well-formed item.
    /// Decodes within `limits`, which the caller shares with the event's other decodes.
    public static func encoding(of bytes: [UInt8], limits: CBORDecoder.Limits) throws(MDocError) -> [UInt8] {
        try encoding(of: try structure { () throws(CBORError) in try CBORDecoder(limits: limits).decode(bytes) }, limits: limits)
    }

    /// The canonical encoding of an item already decoded; its embeddings are decoded within `limits`.
    public static func encoding(of item: CBORItem, limits: CBORDecoder.Limits) throws(MDocError) -> [UInt8] {
        try value(of: item, limits: limits).encoded(sortingMapKeys: true)
    }

    private static func value(of item: CBORItem, limits: CBORDecoder.Limits) throws(MDocError) -> CBOR {
        switch item.content {
        case .tagged(24, let inner):
            guard inner.bytes != nil else { return .tagged(24, try value(of: inner, limits: limits)) }
            let embedded = try structure { () throws(CBORError) in try item.decodeEmbedded("#6.24 content", limits: limits) }
            return .tagged(24, .bytes(try value(of: embedded, limits: limits).encoded(sortingMapKeys: true)))
        case .tagged(let tag, let inner):
            return .tagged(tag, try value(of: inner, limits: limits))
        case .array(let items):
            var values: [CBOR] = []
            values.reserveCapacity(items.count)
            for element in items { values.append(try value(of: element, limits: limits)) }
            return .array(values)
        case .map(let entries):
            var values: [CBOR.MapEntry] = []
            values.reserveCapacity(entries.count)
            for entry in entries { values.append(CBOR.MapEntry(try value(of: entry.key, limits: limits), try value(of: entry.value, limits: limits))) }
            return .map(values)
        default:
            return item.value
        }
    }
}
