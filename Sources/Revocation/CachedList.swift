import Crypto
import Foundation
import StatusList
import Verification

/// A fetched, parsed list token or CRL and what is known of it: when it
/// was fetched, the validators for a conditional refetch, and, per document
/// issuer, whether its signer may sign for that issuer (a path validation
/// and a signature check, done once per issuer and time window rather than
/// once per event).
final class CachedList: @unchecked Sendable {
    enum Content: Sendable {
        case token(ListToken)
        case crl(CertificateRevocationList)
    }

    let content: Content
    /// As fetched, for the shared store.
    let tokenBytes: [UInt8]
    let fetchedAt: Date
    let etag: String?
    let lastModified: String?
    /// Kept by a 304 rather than fetched anew.
    let revalidated: Bool
    /// Guarded by the owning `StatusService`'s lock: its place in the
    /// cache's order, and when it last answered a query (for `prefetch`).
    var lastUse: UInt64 = 0
    var lastUsedAt: Date?
    // Guarded by `lock`.
    private let lock = NSLock()
    private var authorizations: [AuthorizationKey: ClosedRange<Date>] = [:]
    private var offeredToStore = false
    private var everAccepted = false

    /// Lists without a `ttl` are fetched again after this long: an issuer
    /// that names no refresh interval still revokes between a list's `iat`
    /// and its `exp`, which may be a year apart.
    static let defaultTimeToLive: TimeInterval = 3_600
    /// At most this many issuer decisions are remembered per list.
    static let maxAuthorizations = 64

    /// How long after `fetchedAt` it is fetched again.
    let refreshAfter: TimeInterval
    /// About how many bytes it holds: the token or CRL as fetched, and what was read from it.
    let memoryBytes: Int

    /// `crlRefresh`: how long a CRL is used before it is fetched again (a
    /// CRL names no `ttl`; its `nextUpdate` may be weeks away, and issuers
    /// publish revocations before it).
    init(_ content: Content, tokenBytes: [UInt8], fetchedAt: Date, etag: String?, lastModified: String?, revalidated: Bool = false,
         crlRefresh: TimeInterval = CachedList.defaultTimeToLive) {
        self.revalidated = revalidated
        switch content {
        case .token(let token):
            refreshAfter = token.timeToLive ?? Self.defaultTimeToLive
            memoryBytes = tokenBytes.count + (token.statusList?.bytes.count ?? 0) + (token.identifiers?.memoryBytes ?? 0)
        case .crl(let crl):
            refreshAfter = crlRefresh
            memoryBytes = crl.memoryBytes
        }
        self.content = content
        self.tokenBytes = tokenBytes
        self.fetchedAt = fetchedAt
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The token, when it is one.
    var token: ListToken? {
        if case .token(let token) = content { return token }
        return nil
    }

    /// When its issuer made it: a token's `iat`, a CRL's `thisUpdate`.
    var issuedAt: Date {
        switch content {
        case .token(let token): token.issuedAt
        case .crl(let crl): crl.thisUpdate
        }
    }

    /// When it stops holding: a token's `exp`, a CRL's `nextUpdate`.
    var expiresAt: Date {
        switch content {
        case .token(let token): token.expiresAt
        case .crl(let crl): crl.nextUpdate
        }
    }

    /// What the shared store keeps of it.
    var shared: SharedList {
        SharedList(token: tokenBytes, etag: etag, lastModified: lastModified, fetchedAt: fetchedAt, expiresAt: expiresAt)
    }

    /// The same list, confirmed current by a 304 at `time`.
    func confirmed(at time: Date) -> CachedList {
        CachedList(content, tokenBytes: tokenBytes, fetchedAt: time, etag: etag, lastModified: lastModified, revalidated: true, crlRefresh: refreshAfter)
    }

    /// When it must be fetched again: its `ttl` (or the default; for a CRL,
    /// the deployment's `crlRefreshSeconds`) after it was fetched.
    var refreshAt: Date { fetchedAt.addingTimeInterval(refreshAfter) }

    /// Whether it may answer now for a verification at `time`: within its
    /// `ttl` by the clock, and not past its `exp` (`nextUpdate`) at that time
    /// (a list past it is fetched again, never used).
    func isFresh(now: Date, for time: Date) -> Bool { now < refreshAt && time < expiresAt }

    /// Whether some document's issuer has accepted its signer: a list that
    /// one issuer accepts is not dropped because another's document names it.
    var wasAccepted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return everAccepted
    }

    /// True the first time only: whether to hand the list to the shared
    /// store, once a document's issuer has accepted its signer (a token no
    /// one vouched for is never shared).
    func takeStoreOffer() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if offeredToStore { return false }
        offeredToStore = true
        return true
    }

    private struct AuthorizationKey: Hashable {
        let anchor: Certificate
        let documentSigner: Certificate
        let referenceCertificate: [UInt8]?
    }

    /// Whether the list's signer may speak for the document of `query` at
    /// `time` (`ListSignerRule`), and the signature is that signer's. nil: it
    /// may. A yes is remembered for the window its certificates are valid
    /// in; a no is worked out again each time (the service drops a list no
    /// document's issuer accepts).
    func authorization(for query: StatusQuery, referenceCertificate: [UInt8]?, at time: Date) -> StatusUndetermined? {
        guard let token else { return StatusUndetermined(step: "token", detail: "a CRL was found where a list token was expected") }
        let key = AuthorizationKey(anchor: query.issuingAnchor, documentSigner: query.documentSigner, referenceCertificate: referenceCertificate)
        return authorized(key, at: time, window: { signer in (max(signer.notBefore, query.issuingAnchor.notBefore), min(signer.notAfter, query.issuingAnchor.notAfter)) }) {
            let signer: Certificate
            switch ListSignerRule.authorize(token: token, referenceCertificate: referenceCertificate, documentSigner: query.documentSigner,
                                            issuingAnchor: query.issuingAnchor, at: time) {
            case .failure(let error): return .failure(StatusUndetermined(error))
            case .success(let authorized): signer = authorized
            }
            do throws(StatusListError) {
                try token.verifySignature(by: signer)
            } catch {
                return .failure(StatusUndetermined(error))
            }
            return .success(signer)
        }
    }

    /// Whether the CRL is `issuer`'s (RFC 5280 §6.3.3 (f)/(g)): it names
    /// `issuer` as its issuer, `issuer` may sign CRLs (cRLSign, when it has
    /// a key usage at all), and the signature verifies with `issuer`'s key.
    /// nil: it is. Remembered like a token's signer.
    func authorization(ofCRLBy issuer: Certificate, at time: Date) -> StatusUndetermined? {
        guard case .crl(let crl) = content else { return StatusUndetermined(step: "crl", detail: "a list token was found where a CRL was expected") }
        let key = AuthorizationKey(anchor: issuer, documentSigner: issuer, referenceCertificate: nil)
        return authorized(key, at: time, window: { signer in (signer.notBefore, signer.notAfter) }) {
            let refuse = { (detail: String) in Result<Certificate, StatusUndetermined>.failure(StatusUndetermined(step: "crl_signer", detail: detail)) }
            guard crl.isIssued(by: issuer) else { return refuse("the CRL names another issuer than the certificate's") }
            if let usage = issuer.keyUsage, !usage.contains(.cRLSign) { return refuse("the certificate's issuer may not sign CRLs (no cRLSign key usage)") }
            guard case .success(let key) = issuer.facts.publicKey, crl.verifySignature(with: key) else {
                return refuse("the CRL's signature does not verify with its issuer's key")
            }
            return .success(issuer)
        }
    }

    /// `decide`'s answer, or a remembered yes for `key` whose window holds `time`.
    private func authorized(_ key: AuthorizationKey, at time: Date, window: (Certificate) -> (Date, Date),
                            decide: () -> Result<Certificate, StatusUndetermined>) -> StatusUndetermined? {
        lock.lock()
        if let remembered = authorizations[key], remembered.contains(time) {
            lock.unlock()
            return nil
        }
        let accepted = everAccepted
        lock.unlock()
        let signer: Certificate
        switch decide() {
        case .failure(let problem): return problem
        case .success(let authorized): signer = authorized
        }
        if !accepted {
            lock.lock()
            everAccepted = true
            lock.unlock()
        }
        let (from, until) = window(signer)
        guard from <= time, time <= until else { return nil }
        lock.lock()
        if authorizations.count >= Self.maxAuthorizations { authorizations.removeAll(keepingCapacity: true) }
        authorizations[key] = from...until
        lock.unlock()
        return nil
    }
}

extension StatusUndetermined {
    init(_ error: StatusListError) {
        self.init(step: error.step, detail: error.detail)
    }
}
