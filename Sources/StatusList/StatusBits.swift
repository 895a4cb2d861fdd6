import CBOR
import MDoc

/// A decompressed Token Status List (draft-ietf-oauth-status-list §4.1):
/// `bits` bits per entry, entry `i` in byte `i * bits / 8` at bit offset
/// `(i * bits) % 8` counted from the least significant bit.
public struct StatusBits: Sendable {
    /// 1, 2, 4 or 8: every entry lies within one byte.
    public let bits: Int
    /// The list after inflation.
    public let bytes: [UInt8]

    /// Entries the list holds: every whole `bits`-bit field of its bytes.
    public var count: Int { bytes.count * (8 / bits) }

    /// The draft fixes the sizes so that no entry straddles two bytes.
    public static let allowedBits: Set<Int> = [1, 2, 4, 8]

    /// A list of `bits` bits per entry over `bytes` (already inflated).
    public init(bits: Int, bytes: [UInt8]) throws(StatusListError) {
        guard Self.allowedBits.contains(bits) else { throw .claims("status list bits is not 1, 2, 4 or 8") }
        self.bits = bits
        self.bytes = bytes
    }

    /// The status at `index`; nil beyond the list's entries, where the draft
    /// (§8.3) says no statement can be made.
    public func status(at index: UInt64) -> UInt8? {
        guard index < UInt64(count) else { return nil }
        let bitOffset = index * UInt64(bits)
        let byte = bytes[Int(bitOffset / 8)]
        let mask = UInt8(truncatingIfNeeded: (1 << bits) - 1)
        return (byte >> UInt8(bitOffset % 8)) & mask
    }

    /// The status at `index`, or `.index` beyond the entries. The detail
    /// names neither the index nor the list's size, which an index just
    /// past the end would equal.
    public func requireStatus(at index: UInt64) throws(StatusListError) -> UInt8 {
        guard let status = status(at: index) else { throw .index("the index the document names lies beyond the list's entries") }
        return status
    }

    /// A `StatusList` CBOR map alone (`{bits, lst, ? aggregation_uri}`, draft
    /// §4.3), as the draft's examples print it, inflated within `limits`.
    public init(cbor: some Collection<UInt8>, limits: ListLimits = .init()) throws(StatusListError) {
        let item: CBORItem
        do {
            item = try CBORDecoder(limits: limits.envelopeDecoding).decode(Array(cbor))
        } catch {
            throw .token(describe(error))
        }
        self = try Self.read(item, limits: limits).list
    }

    /// Reads the status list claim (draft §4.3). Keys it does not know are
    /// ignored, as CWT claims are: the draft may add some.
    static func read(_ item: CBORItem, limits: ListLimits) throws(StatusListError) -> (list: StatusBits, aggregationURI: String?) {
        guard let entries = item.entries else { throw .claims("the status list claim is not a map") }
        var bits: Int?
        var compressed: ArraySlice<UInt8>?
        var aggregationURI: String?
        for entry in entries {
            if entry.hasTextKey("bits") {
                guard let value = entry.value.unsigned, value <= 8 else { throw .claims("status list bits is not 1, 2, 4 or 8") }
                bits = Int(value)
            } else if entry.hasTextKey("lst") {
                guard let value = entry.value.bytes else { throw .claims("status list lst is not a byte string") }
                compressed = value
            } else if entry.hasTextKey("aggregation_uri") {
                guard let value = entry.value.text else { throw .claims("status list aggregation_uri is not a text string") }
                aggregationURI = value
            }
        }
        guard let bits else { throw .claims("the status list has no bits") }
        guard let compressed else { throw .claims("the status list has no lst") }
        // The width is checked before anything is inflated.
        guard allowedBits.contains(bits) else { throw .claims("status list bits is not 1, 2, 4 or 8") }
        let inflated: [UInt8]
        do {
            inflated = try Inflate.zlib(compressed, maxOutput: limits.maxListBytes)
        } catch {
            throw .decompression("status list lst \(error.detail)")
        }
        return (try StatusBits(bits: bits, bytes: inflated), aggregationURI)
    }
}
