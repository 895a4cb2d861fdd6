/// Why a fetched list token, or a lookup in it, gives no status statement.
///
/// Each case names the step that failed (`step`, stable, for reason details
/// and metrics) and says why in words for people (`detail`). A detail names
/// structures, claims, limits and certificates by role, never the index or
/// identifier looked up and never the list's URI: those tie a verification
/// to one document, and reason details are kept and shown.
public enum StatusListError: Error, Sendable, Equatable {
    /// Not a COSE_Sign1_Tagged CWT of the expected shape: malformed CBOR or
    /// COSE, untagged, a JWT, a duplicate key, over a size bound.
    case token(String)
    /// The protected `typ` is missing or is not this kind's media type.
    case mediaType(String)
    /// The signature does not verify, or the algorithm cannot be used with the key.
    case signature(String)
    /// The signer is not one the list rule lets sign for this document.
    case signer(String)
    /// `sub` is missing or is not the URI the document names.
    case subject(String)
    /// `iat` is missing, not an integer, or later than the verification time allows.
    case issuedAt(String)
    /// `exp` is missing, not an integer, passed, or too far from `iat`.
    case expiration(String)
    /// The list claim is missing, of the wrong shape, or the other kind's claim is present.
    case claims(String)
    /// The compressed list is not one zlib stream, or inflates past the bound.
    case decompression(String)
    /// The index lies beyond the list's entries: no statement can be made.
    case index(String)
    /// A COSE_Mac0 token: verifying it needs a MAC key shared with the
    /// status issuer, and Veridoc holds none.
    case mac(String)

    /// The failed step, as reason details and metrics name it.
    public var step: String {
        switch self {
        case .token: "token"
        case .mediaType: "media_type"
        case .signature: "signature"
        case .signer: "signer"
        case .subject: "sub"
        case .issuedAt: "iat"
        case .expiration: "exp"
        case .claims: "claims"
        case .decompression: "decompression"
        case .index: "index"
        case .mac: "mac"
        }
    }

    public var detail: String {
        switch self {
        case .token(let text), .mediaType(let text), .signature(let text), .signer(let text), .subject(let text),
             .issuedAt(let text), .expiration(let text), .claims(let text), .decompression(let text), .index(let text),
             .mac(let text):
            text
        }
    }
}
