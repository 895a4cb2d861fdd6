/// Which of the two revocation lists ISO/IEC 18013-5 (2nd edition §12.3.6)
/// lets an MSO point at. Both travel as a CWT in a COSE_Sign1; they differ
/// in their media type and in the one claim that carries the list.
public enum ListKind: Sendable, Hashable, CaseIterable {
    /// An IETF Token Status List (draft-ietf-oauth-status-list): a packed
    /// array of status values, read at the index the MSO names.
    case statusList
    /// An ISO identifier list: the identifiers of revoked documents, looked
    /// up by the identifier the MSO names.
    case identifierList

    /// The protected `typ` (COSE header 16, RFC 9596) the token must carry.
    /// Only the text form is accepted: the CoAP Content-Format numbers the
    /// draft asks IANA for are still unassigned, so no number can be meant.
    public var mediaType: String {
        switch self {
        case .statusList: "application/statuslist+cwt"
        case .identifierList: "application/identifierlist+cwt"
        }
    }

    /// The CWT claim that holds this kind's list: 65533 `status_list`
    /// (the draft) or 65530 `identifier_list` (ISO 18013-5 §12.3.6.4).
    public var listClaim: Int64 {
        switch self {
        case .statusList: CWTClaim.statusList
        case .identifierList: CWTClaim.identifierList
        }
    }

    /// The other kind's claim, which must be absent: a token is one kind of list, never both.
    var foreignClaim: Int64 {
        switch self {
        case .statusList: CWTClaim.identifierList
        case .identifierList: CWTClaim.statusList
        }
    }
}

/// CWT claim keys read here (RFC 8392 §4, the draft's registrations, ISO 18013-5 §12.3.6.4).
enum CWTClaim {
    static let issuer: Int64 = 1
    static let subject: Int64 = 2
    static let expiration: Int64 = 4
    static let issuedAt: Int64 = 6
    static let identifierList: Int64 = 65530
    static let statusList: Int64 = 65533
    static let timeToLive: Int64 = 65534
}
