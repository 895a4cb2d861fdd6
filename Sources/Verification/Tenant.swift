import Crypto
import Foundation
import JSON
import JOSE
import MDoc
import Settings

/// One merchant decryption key, held as a ready OpenSSL object with the
/// identifiers the envelopes use to name it.
public struct TenantKey: Sendable {
    public let privateKey: PrivateKey
    /// `04 || X || Y`: how Annex C's EncryptionInfo names the recipient.
    public let publicPoint: [UInt8]
    /// SHA-256 of `publicPoint`: how Apple's envelope names the recipient (pkRHash).
    public let keyHash: [UInt8]
    /// The RFC 7638 thumbprint: OpenID4VP's transcript binds it, and its
    /// base64url form is the key's `kid` (`keyID`), by which a JWE names it.
    public let thumbprint: [UInt8]
    public let keyID: String

    public init(_ privateKey: PrivateKey) throws(ConfigError) {
        guard privateKey.type == .ec(.p256), let point = privateKey.publicKey.uncompressedPoint else {
            throw ConfigError("encryption keys must be P-256 (the HPKE suite Apple and Annex C use)")
        }
        self.privateKey = privateKey
        publicPoint = point
        keyHash = sha256(point)
        thumbprint = ECJWK.thumbprint(of: privateKey.publicKey) ?? []
        keyID = Base64.encodeURL(thumbprint)
    }
}

/// The key serve signs a tenant's ProximityReader tokens with (ES256), and
/// the identifiers the tokens carry.
public struct ReaderTokenKey: Sendable {
    /// The token's `iss`.
    public let brandID: String
    /// The header's `kid`.
    public let keyID: String
    public let signingKey: PrivateKey
}

/// A tenant: its config entry resolved into keys and a trust store. The one
/// tenant type: the worker verifies with it, serve opens sessions and signs
/// reader tokens with it, and every room looks it up by the id's bytes
/// (`TenantDirectory`).
public struct Tenant: Sendable {
    public let id: String
    public let merchantIDs: Set<String>
    public let teamID: String?
    public let keys: [TenantKey]
    public let trustStore: TrustStore
    /// What the anchors the tenant trusts through VICALs may vouch for
    /// (docTypes, freshness); anchors of `trustAnchors` vouch for everything.
    public let anchorScopes: AnchorScopes
    /// When each of the tenant's VICALs goes stale (the worker's readiness watches them).
    public let trustListDeadlines: [TrustListDeadline]
    public let origins: Set<String>
    public let maxRequestAge: TimeInterval
    /// The longest a session serve opens for the tenant may live, in seconds.
    public let maxSessionSeconds: Int
    /// Only nonces Veridoc issued (`IssuedNonce`) are accepted.
    public let requireIssuedNonces: Bool
    /// What serve may make sessions for (`requestableElements`); nil: anything.
    public let requestAllowlist: RequestAllowlist?
    /// How long disclosed values may be kept (docs/retention.md).
    public let retention: TenantRetention
    /// The integration's P-256 key: when set, outcomes carry the requested
    /// element values sealed to it (`data.claims`).
    public let outcomeRecipientKey: PublicKey?
    /// Set for a test tenant (docs/test-mode.md): its trust store holds test anchors only, and
    /// every outcome it gives is marked as a test.
    public let testConditions: TestConditions?
    /// Proximity readers whose signature lets a device MAC count
    /// (`ReaderAttestation`), by reader instance identifier, matched by bytes.
    private let readers: [Identifier: PublicKey]
    /// SHA-256 hashes (hex) of the API keys serve accepts for the tenant.
    public let apiKeyHashes: [String]
    /// Where serve signs the tenant's reader tokens; nil: it issues none.
    public let readerTokenKey: ReaderTokenKey?
    /// What signs the web flow's DeviceRequests (`readerAuthAll`), the
    /// signer chosen per session; nil: they go unsigned.
    public let webReader: SignerRotation<ReaderSigner>?
    /// What signs OpenID4VP request objects, likewise; nil: none are signed.
    public let openID4VPVerifier: SignerRotation<OpenID4VPVerifierIdentity>?
    /// Whether serve may hand out unsigned OpenID4VP requests (`openID4VPUnsignedRequests`).
    public let allowsUnsignedOpenID4VPRequests: Bool
    /// What a web session offers, in order (`digitalCredentialsProtocols`).
    public let digitalCredentialsProtocols: [TenantSettings.DigitalCredentialsProtocol]
    /// Whether iso-device-response accepts OpenID4VP transcripts (their verifier is not Veridoc's to check).
    public let acceptsOpenID4VPTranscripts: Bool
    /// Whether openid4vp-dc-api accepts responses in the clear (`dc_api`).
    public let acceptsUnencryptedOpenID4VP: Bool
    /// How revocation references are checked (`DocumentStatusCheck`).
    public let statusPolicy: TenantSettings.StatusPolicy
    /// The same identifiers, matched by their bytes (`Identifier`).
    private let exactMerchantIDs: Set<Identifier>
    private let exactOrigins: Set<Identifier>

    public init(
        id: String, merchantIDs: Set<String> = [], teamID: String? = nil, keys: [TenantKey] = [], trustAnchors: [Certificate],
        pinnedDocumentSigners: [Certificate] = [], listedAnchors: [ListedAnchor] = [], trustListDeadlines: [TrustListDeadline] = [],
        origins: Set<String> = [], maxRequestAge: TimeInterval = 600, maxSessionSeconds: Int? = nil, retention: TenantRetention = .none, outcomeRecipientKey: PublicKey? = nil,
        requireIssuedNonces: Bool = false, requestAllowlist: RequestAllowlist? = nil, testConditions: TestConditions? = nil, readers: [String: PublicKey] = [:], acceptsOpenID4VPTranscripts: Bool = true,
        acceptsUnencryptedOpenID4VP: Bool = false,
        apiKeyHashes: [String] = [], readerTokenKey: ReaderTokenKey? = nil, statusPolicy: TenantSettings.StatusPolicy = .init(),
        webReader: SignerRotation<ReaderSigner>? = nil, openID4VPVerifier: SignerRotation<OpenID4VPVerifierIdentity>? = nil, allowsUnsignedOpenID4VPRequests: Bool = false,
        digitalCredentialsProtocols: [TenantSettings.DigitalCredentialsProtocol] = TenantSettings.DigitalCredentialsProtocol.allCases
    ) {
        self.digitalCredentialsProtocols = digitalCredentialsProtocols
        self.webReader = webReader
        self.openID4VPVerifier = openID4VPVerifier
        self.allowsUnsignedOpenID4VPRequests = allowsUnsignedOpenID4VPRequests
        self.statusPolicy = statusPolicy
        self.apiKeyHashes = apiKeyHashes
        self.readerTokenKey = readerTokenKey
        self.acceptsOpenID4VPTranscripts = acceptsOpenID4VPTranscripts
        self.acceptsUnencryptedOpenID4VP = acceptsUnencryptedOpenID4VP
        self.readers = Dictionary(readers.map { (Identifier($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.testConditions = testConditions
        self.id = id
        self.merchantIDs = merchantIDs
        self.teamID = teamID
        self.keys = keys
        self.trustStore = TrustStore(anchors: trustAnchors + listedAnchors.map(\.certificate), pinnedSigners: pinnedDocumentSigners)
        self.anchorScopes = AnchorScopes(direct: trustAnchors + pinnedDocumentSigners, listed: listedAnchors)
        self.trustListDeadlines = trustListDeadlines
        self.origins = origins
        self.maxRequestAge = maxRequestAge
        // By default a session lasts as long as the request it carries may be old.
        self.maxSessionSeconds = maxSessionSeconds ?? min(Int(maxRequestAge), TenantSettings.maxSessionSecondsLimit)
        self.requireIssuedNonces = requireIssuedNonces
        self.requestAllowlist = requestAllowlist
        self.retention = retention
        self.outcomeRecipientKey = outcomeRecipientKey
        exactMerchantIDs = Set(merchantIDs.map(Identifier.init))
        exactOrigins = Set(origins.map(Identifier.init))
    }

    /// The tenant's origins whose host no `x509_san_dns` verifier certificate
    /// names (exactly, or by a `*.` wildcard for one label). OpenID4VP 1.0
    /// §5.9.3 holds a redirect URI's host to that name, and a wallet that
    /// holds the origin to it likewise would refuse requests from these.
    public var originsOutsideVerifierNames: [String] {
        let identities = (openID4VPVerifier?.signers ?? []).filter { $0.clientID.hasPrefix("x509_san_dns:") }
        guard !identities.isEmpty else { return [] }
        return origins.sorted().filter { origin in
            guard let host = WebOrigin.host(of: origin) else { return true }
            return !identities.contains { identity in
                identity.dnsNames.contains { name in
                    if name == host { return true }
                    guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
                    return host[host.index(after: dot)...] == name.dropFirst(2)
                }
            }
        }
    }

    /// Whether serve can make OpenID4VP requests for the tenant: signed with
    /// its verifier identity, or unsigned where it chose so or is a test tenant.
    public var makesOpenID4VPRequests: Bool {
        openID4VPVerifier != nil || allowsUnsignedOpenID4VPRequests || testConditions != nil
    }

    /// Whether `merchantID` is, byte for byte, one of the tenant's.
    public func owns(merchantID: String) -> Bool { exactMerchantIDs.contains(Identifier(merchantID)) }

    /// Whether `origin` is, byte for byte, one of the tenant's.
    public func owns(origin: String) -> Bool { exactOrigins.contains(Identifier(origin)) }

    /// The registered key of reader `id`, matched by its bytes.
    public func readerKey(_ id: String) -> PublicKey? { readers[Identifier(id)] }

    func key(withHash hash: [UInt8]) -> TenantKey? {
        keys.first { $0.keyHash == hash }
    }

    func key(withPublicPoint point: [UInt8]) -> TenantKey? {
        keys.first { $0.publicPoint == point }
    }

    /// The encryption key whose `keyID` (its thumbprint, base64url) is `kid`, by bytes.
    func key(withID kid: String) -> TenantKey? {
        keys.first { $0.keyID.utf8.elementsEqual(kid.utf8) }
    }
}

/// The tenants a verifier serves, by id: by the id's bytes, as the nonce
/// store keys them, so a lookalike id is an unknown tenant, never an alias.
public struct TenantDirectory: Sendable {
    private let byID: [Identifier: Tenant]

    public init(_ tenants: [Tenant]) {
        byID = Dictionary(tenants.map { (Identifier($0.id), $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var tenants: [Tenant] { Array(byID.values) }

    public subscript(id: String) -> Tenant? { byID[Identifier(id)] }
}
