import Crypto
import Foundation
import StatusList
import Verification

/// A fetched, parsed list token and what is known of it: when it was
/// fetched, the validators for a conditional refetch, and, per document
/// issuer, whether its signer may sign for that issuer (a path validation
/// and a signature check, done once per issuer and time window rather than
/// once per event).
final class CachedList: @unchecked Sendable {
    let token: ListToken
    /// As fetched, for the shared store.
    let tokenBytes: [UInt8]
    let fetchedAt: Date
    let etag: String?
    let lastModified: String?
    /// Kept by a 304 rather than fetched anew.
    let revalidated: Bool
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

    init(token: ListToken, tokenBytes: [UInt8], fetchedAt: Date, etag: String?, lastModified: String?, revalidated: Bool = false) {
        self.revalidated = revalidated
        self.token = token
        self.tokenBytes = tokenBytes
        self.fetchedAt = fetchedAt
        self.etag = etag
        self.lastModified = lastModified
    }

    /// What the shared store keeps of it.
    var shared: SharedList {
        SharedList(token: tokenBytes, etag: etag, lastModified: lastModified, fetchedAt: fetchedAt, expiresAt: token.expiresAt)
    }

    /// The same token, confirmed current by a 304 at `time`.
    func confirmed(at time: Date) -> CachedList {
        CachedList(token: token, tokenBytes: tokenBytes, fetchedAt: time, etag: etag, lastModified: lastModified, revalidated: true)
    }

    /// When it must be fetched again: its `ttl` (or the default) after it was fetched.
    var refreshAt: Date { fetchedAt.addingTimeInterval(token.timeToLive ?? Self.defaultTimeToLive) }

    /// Whether it may answer now for a verification at `time`: within its
    /// `ttl` by the clock, and not past its `exp` at that time (a list past
    /// its `exp` is fetched again, never used).
    func isFresh(now: Date, for time: Date) -> Bool { now < refreshAt && time < token.expiresAt }

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
        let key = AuthorizationKey(anchor: query.issuingAnchor, documentSigner: query.documentSigner, referenceCertificate: referenceCertificate)
        lock.lock()
        if let window = authorizations[key], window.contains(time) {
            lock.unlock()
            return nil
        }
        let accepted = everAccepted
        lock.unlock()
        let signer: Certificate
        switch ListSignerRule.authorize(token: token, referenceCertificate: referenceCertificate, documentSigner: query.documentSigner,
                                        issuingAnchor: query.issuingAnchor, at: time) {
        case .failure(let error): return StatusUndetermined(error)
        case .success(let authorized): signer = authorized
        }
        do {
            try token.verifySignature(by: signer)
        } catch {
            return StatusUndetermined(error)
        }
        if !accepted {
            lock.lock()
            everAccepted = true
            lock.unlock()
        }
        let from = max(signer.notBefore, query.issuingAnchor.notBefore), until = min(signer.notAfter, query.issuingAnchor.notAfter)
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
