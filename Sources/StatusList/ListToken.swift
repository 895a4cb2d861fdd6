import CBOR
import Crypto
import Foundation
import MDoc

/// A fetched Status List Token or identifier list token, parsed strictly.
///
/// Parsing checks the form: a COSE_Sign1_Tagged (18) CWT (draft -15 and
/// later require the tag, so the untagged tokens of earlier drafts are
/// refused), the protected `typ` of `kind`, a supported algorithm, the
/// claims set (`ListClaims`), the list itself inflated within the limits.
/// The signature, the signer, the time and the subject are separate
/// checks, because each needs something from the document that named the
/// list: `verifySignature`, `ListSignerRule`, `checkValidity`, `checkSubject`.
public struct ListToken: Sendable {
    public let kind: ListKind
    /// `sub`: the URI the list is published at.
    public let subject: String
    public let issuedAt: Date
    public let expiresAt: Date
    /// `ttl`: how long the token may be cached, when the issuer says.
    public let timeToLive: TimeInterval?
    /// `iss`, when present.
    public let issuer: String?
    /// The `x5chain` certificates, leaf first; empty when the token carries none.
    public let signerChain: [Certificate]
    public let algorithm: COSESignatureAlgorithm
    /// The entries, for `.statusList`.
    public let statusList: StatusBits?
    /// The revoked identifiers, for `.identifierList`.
    public let identifiers: IdentifierSet?
    /// Where the issuer's other lists are listed, when it says.
    public let aggregationURI: String?
    /// The received message: the signature covers its bytes, not a re-encoding.
    let message: COSESign1
    let issuedAtSeconds: Int64
    let expiresAtSeconds: Int64

    public init(bytes: [UInt8], kind: ListKind, limits: ListLimits = .init()) throws(StatusListError) {
        guard bytes.count <= limits.maxTokenBytes else { throw .token("the token has more than \(limits.maxTokenBytes) bytes") }
        let item: CBORItem
        do {
            item = try CBORDecoder(limits: limits.envelopeDecoding).decode(bytes)
        } catch {
            throw .token("not a CBOR token: \(describe(error))")
        }
        switch item.tagged?.tag {
        case 18:
            break
        case 17:
            throw .mac("a COSE_Mac0 token needs a MAC key shared with the status issuer, and Veridoc holds none")
        case 61:
            throw .token("the token carries the CWT tag (61), which the draft forbids")
        case .some(let tag):
            throw .token("tag \(tag) is not COSE_Sign1_Tagged (18)")
        case nil:
            throw .token("the token is not tagged COSE_Sign1_Tagged (18), which draft -15 and later require")
        }
        let message: COSESign1
        do {
            message = try COSESign1(item, context: "list token", limits: limits.envelopeDecoding)
        } catch {
            throw .token(error.detail)
        }
        try Self.checkType(message, kind: kind)
        do {
            algorithm = try message.algorithm(context: "list token")
        } catch {
            throw error.isUnsupported ? .signature(error.detail) : .token(error.detail)
        }
        do {
            signerChain = try message.x5chain(context: "list token")
        } catch {
            throw .token(error.detail)
        }
        guard let payload = message.payload else { throw .token("the token's payload is detached") }
        let claims = try ListClaims.read(payload, kind: kind, limits: limits)

        self.kind = kind
        self.message = message
        subject = claims.subject
        issuedAtSeconds = claims.issuedAt
        expiresAtSeconds = claims.expiresAt
        issuedAt = Date(timeIntervalSince1970: TimeInterval(claims.issuedAt))
        expiresAt = Date(timeIntervalSince1970: TimeInterval(claims.expiresAt))
        timeToLive = claims.timeToLive.map { TimeInterval($0) }
        issuer = claims.issuer
        statusList = claims.statusList
        identifiers = claims.identifiers
        aggregationURI = claims.aggregationURI
    }

    /// RFC 9596: `typ` (16) in the protected header, the kind's media type
    /// byte for byte. An unprotected `typ` is not integrity protected, so it
    /// says nothing.
    private static func checkType(_ message: COSESign1, kind: ListKind) throws(StatusListError) {
        guard let type = message.protectedHeader?[label: 16] else {
            throw .mediaType("the protected header has no typ; it must be \(kind.mediaType)")
        }
        guard let text = type.text else { throw .mediaType("typ is not a text string; it must be \(kind.mediaType)") }
        guard text.hasSameUTF8(as: kind.mediaType) else { throw .mediaType("typ is not \(kind.mediaType)") }
    }

    /// Whether the signature over the received Sig_structure (RFC 9052
    /// §4.4, `COSESign1.toBeSigned`) verifies with `key`. The algorithm must
    /// belong to the key's type (ISO 18013-5 pairs each ECDSA algorithm with
    /// one curve). ESP256 (-9, RFC 9864) is ES256 fully specified, ECDSA on
    /// P-256 with SHA-256, and is accepted wherever ES256 is, as the rest of
    /// Veridoc accepts it; likewise ESP384, ESP512 and Ed25519 (-19).
    public func verifySignature(with key: PublicKey) throws(StatusListError) {
        guard key.type == algorithm.keyType else {
            throw .signature("the token's algorithm \(algorithm) cannot be used with the signer's key")
        }
        guard message.isValidSignature(algorithm: algorithm, key: key) else {
            throw .signature("the token's signature does not verify with the signer's key")
        }
    }

    /// `verifySignature(with:)` with the key `certificate` certifies (the one
    /// `ListSignerRule.authorize` returns).
    public func verifySignature(by certificate: Certificate) throws(StatusListError) {
        let key: PublicKey
        do {
            key = try certificate.publicKey()
        } catch {
            throw .signer("the list signer's key is not EC P-256, P-384, P-521 or Ed25519")
        }
        try verifySignature(with: key)
    }

    /// The longest an identifier list may be valid, `exp - iat`. multipaz
    /// (`IdentifierList.fromCwt`, maxValidity) applies 365 days for ISO
    /// 18013-5 §12.3.6; the ISO text itself was not available here.
    public static let maxIdentifierListValidity: TimeInterval = 365 * 86_400

    /// The time rules at `time`: issued no later than `time + allowedClockSkew`,
    /// not yet expired (`time < exp`; the skew is not granted there: the
    /// issuer says when its statement stops holding, and a list past it must
    /// not be used), `exp` after `iat`, and an identifier list valid for no
    /// more than `maxIdentifierListValidity`.
    public func checkValidity(at time: Date, allowedClockSkew: TimeInterval) throws(StatusListError) {
        guard expiresAtSeconds > issuedAtSeconds else { throw .expiration("exp is not after iat") }
        if kind == .identifierList, Double(expiresAtSeconds) - Double(issuedAtSeconds) > Self.maxIdentifierListValidity {
            throw .expiration("the identifier list is valid for more than 365 days (exp - iat)")
        }
        guard issuedAt <= time.addingTimeInterval(allowedClockSkew) else {
            throw .issuedAt("the token is issued after the verification time, beyond the allowed clock skew")
        }
        guard time < expiresAt else { throw .expiration("the token has expired") }
    }

    /// `sub` must be the URI the document named, byte for byte (draft §8.3):
    /// Swift's `String` equality is Unicode-canonical, so two spellings of
    /// one text would pass as the same URI.
    public func checkSubject(_ uri: String) throws(StatusListError) {
        guard subject.hasSameUTF8(as: uri) else { throw .subject("sub is not the URI the document names") }
    }
}
