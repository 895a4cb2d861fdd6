import CBOR

/// What one list token may cost to read. Lists come from the network, from
/// whoever answers at the URI an MSO names, so every size is bounded before
/// it is allocated.
public struct ListLimits: Sendable, Equatable {
    /// The most bytes a token may have. The default leaves room for
    /// `maxIdentifiers` identifiers of 32 bytes (35 bytes each with their
    /// CBOR heads and empty info maps); a status list, being compressed, is
    /// far smaller.
    public var maxTokenBytes: Int
    /// The most bytes a status list may inflate to. 16 MiB holds 2^27
    /// one-bit entries, far beyond any issuer's population; a zlib bomb
    /// stops here, never inflated further.
    public var maxListBytes: Int
    /// The most identifiers an identifier list may hold.
    public var maxIdentifiers: Int
    /// The longest identifier accepted. ISO 18013-5 leaves the length open;
    /// the published examples use 32 random bytes. 64 bytes hold a 512-bit
    /// random value or a SHA-512 digest, twice what uniqueness needs, and a
    /// longer identifier would only make every list larger to hold and hash.
    /// A list with a longer (or an empty) identifier is refused whole: it
    /// does not follow the profile Veridoc can check against.
    public var maxIdentifierLength: Int

    public init(maxTokenBytes: Int = 160 << 20, maxListBytes: Int = 16 << 20, maxIdentifiers: Int = 4_000_000, maxIdentifierLength: Int = 64) {
        self.maxTokenBytes = maxTokenBytes
        self.maxListBytes = maxListBytes
        self.maxIdentifiers = maxIdentifiers
        self.maxIdentifierLength = maxIdentifierLength
    }

    /// The decoder's limits for the claims set: each identifier is a key and
    /// an info map (two items, a few more when the map holds something), and
    /// the other claims take a few hundred at most.
    var claimsDecoding: CBORDecoder.Limits {
        CBORDecoder.Limits(maxDepth: 16, maxItems: maxIdentifiers.multipliedReportingOverflow(by: 4).partialValue + 4_096, maxInputSize: maxTokenBytes)
    }

    /// The decoder's limits for the COSE envelope: four parts and two small header maps.
    var envelopeDecoding: CBORDecoder.Limits {
        CBORDecoder.Limits(maxDepth: 16, maxItems: 4_096, maxInputSize: maxTokenBytes)
    }
}
