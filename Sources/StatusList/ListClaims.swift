import CBOR
import MDoc

/// The CWT claims set (RFC 8392) of a list token, read strictly: `sub`,
/// `iat` and `exp` are required (the draft makes `exp` only recommended;
/// ISO 18013-5 §12.3.6.3 requires it), `ttl` and `iss` are checked when
/// present, this kind's list claim is required and the other kind's is
/// refused. Claims not named here are ignored, as RFC 8392 says.
///
/// Times are integers: the draft's tokens and ISO's use whole seconds, and a
/// fractional NumericDate would only add rounding to compare.
struct ListClaims {
    let subject: String
    let issuedAt: Int64
    let expiresAt: Int64
    let timeToLive: UInt64?
    let issuer: String?
    let statusList: StatusBits?
    let identifiers: IdentifierSet?
    let aggregationURI: String?

    static func read(_ payload: ArraySlice<UInt8>, kind: ListKind, limits: ListLimits) throws(StatusListError) -> ListClaims {
        if let fields = try readInPlace(payload, kind: kind, limits: limits) {
            return try fields.finish(kind: kind, limits: limits)
        }
        return try readDecoded(payload, kind: kind, limits: limits).finish(kind: kind, limits: limits)
    }

    /// The claims as found, before their rules are applied.
    private struct Fields {
        var subject: CBORItem?
        var issuedAt: CBORItem?
        var expiresAt: CBORItem?
        var timeToLive: CBORItem?
        var issuer: CBORItem?
        var statusList: CBORItem?
        var identifiers: (IdentifierSet, String?)?
        var hasForeignClaim = false

        mutating func take(_ label: Int64, _ value: CBORItem, kind: ListKind) {
            switch label {
            case CWTClaim.subject: subject = value
            case CWTClaim.issuedAt: issuedAt = value
            case CWTClaim.expiration: expiresAt = value
            case CWTClaim.timeToLive: timeToLive = value
            case CWTClaim.issuer: issuer = value
            case kind.foreignClaim: hasForeignClaim = true
            case CWTClaim.statusList: statusList = value
            default: break
            }
        }

        func finish(kind: ListKind, limits: ListLimits) throws(StatusListError) -> ListClaims {
            if hasForeignClaim {
                throw .claims(kind == .statusList
                    ? "a status list token carries the identifier list claim (65530)"
                    : "an identifier list token carries the status list claim (65533)")
            }
            guard let subject else { throw .subject("the token has no sub claim") }
            guard let subjectText = subject.text else { throw .subject("sub is not a text string") }
            guard let issuedAt else { throw .issuedAt("the token has no iat claim") }
            guard let issuedAtSeconds = issuedAt.int else { throw .issuedAt("iat is not an integer") }
            guard let expiresAt else { throw .expiration("the token has no exp claim") }
            guard let expiresAtSeconds = expiresAt.int else { throw .expiration("exp is not an integer") }
            var ttl: UInt64?
            if let timeToLive {
                // The draft: an unsigned integer, and positive.
                guard let value = timeToLive.unsigned, value > 0 else { throw .claims("ttl is not a positive integer") }
                ttl = value
            }
            var issuerText: String?
            if let issuer {
                guard let text = issuer.text else { throw .claims("iss is not a text string") }
                issuerText = text
            }
            switch kind {
            case .statusList:
                guard let statusList else { throw .claims("the token has no status list claim (65533)") }
                let (list, aggregationURI) = try StatusBits.read(statusList, limits: limits)
                return ListClaims(subject: subjectText, issuedAt: issuedAtSeconds, expiresAt: expiresAtSeconds, timeToLive: ttl,
                                  issuer: issuerText, statusList: list, identifiers: nil, aggregationURI: aggregationURI)
            case .identifierList:
                guard let (identifiers, aggregationURI) = identifiers else { throw .claims("the token has no identifier list claim (65530)") }
                return ListClaims(subject: subjectText, issuedAt: issuedAtSeconds, expiresAt: expiresAtSeconds, timeToLive: ttl,
                                  issuer: issuerText, statusList: nil, identifiers: identifiers, aggregationURI: aggregationURI)
            }
        }
    }

    /// The claims map walked in place: integer and text keys, each value
    /// decoded on its own, the identifier list read without an item tree.
    /// Nil when the cursor meets what it does not read; `readDecoded` then
    /// decodes the whole set and refuses it precisely or reads it.
    private static func readInPlace(_ payload: ArraySlice<UInt8>, kind: ListKind, limits: ListLimits) throws(StatusListError) -> Fields? {
        guard var cursor = CBORCursor(payload, limits: limits.claimsDecoding), let count = cursor.mapCount() else { return nil }
        var fields = Fields()
        var labels = Set<Int64>()
        var textKeys = TextKeySet()
        for _ in 0..<count {
            let label: Int64
            switch cursor.nextMajor {
            case 0:
                guard let key = cursor.unsigned(), key <= UInt64(Int64.max) else { return nil }
                label = Int64(key)
            case 1:
                guard let key = cursor.item(depth: 1)?.int else { return nil }
                label = key
            case 3:
                // Text-keyed claims are none of those read here: checked and skipped.
                guard let key = cursor.textBytes(), cursor.skipEntry(key, among: &textKeys, depth: 1) else { return nil }
                continue
            default:
                return nil
            }
            guard labels.insert(label).inserted else { throw .token("the claims set has a duplicate key") }
            if label == CWTClaim.identifierList, kind == .identifierList {
                guard let claim = try IdentifierListClaim.readInPlace(&cursor, limits: limits) else { return nil }
                fields.identifiers = claim
            } else {
                guard let value = cursor.item(depth: 1) else { return nil }
                fields.take(label, value, kind: kind)
            }
        }
        return cursor.isAtEnd ? fields : nil
    }

    private static func readDecoded(_ payload: ArraySlice<UInt8>, kind: ListKind, limits: ListLimits) throws(StatusListError) -> Fields {
        let root: CBORItem
        do {
            root = try CBORDecoder(limits: limits.claimsDecoding).decode(payload)
        } catch {
            throw .token("claims set: \(describe(error))")
        }
        guard let entries = root.entries else { throw .token("the claims set is not a map") }
        var fields = Fields()
        for entry in entries {
            // Claims under other keys (text, or integers past Int64) are none of those read here.
            guard let label = entry.key.int else { continue }
            if label == CWTClaim.identifierList, kind == .identifierList {
                fields.identifiers = try IdentifierListClaim.read(entry.value, limits: limits)
            } else {
                fields.take(label, entry.value, kind: kind)
            }
        }
        return fields
    }
}
