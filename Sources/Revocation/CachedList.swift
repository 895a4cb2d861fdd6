import Crypto
import Foundation
import StatusList
import Verification

/// A fetched, parsed list token and what is known of it: when it was
/// fetched, the validators for a conditional refetch, and, per document
/// issuer, whether its signer may sign for that issuer (a path validation
/// and a signature check, done once per issuer rather than once per event).
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
    private var authorizations: [AuthorizationKey: StatusUndetermined?] = [:]

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

    private struct AuthorizationKey: Hashable {
        let anchor: Certificate
        let documentSigner: Certificate
        let referenceCertificate: [UInt8]?
    }

    /// Whether the list's signer may speak for the document of `query`
    /// (`ListSignerRule`), and the signature is that signer's. nil: it may.
    func authorization(for query: StatusQuery, referenceCertificate: [UInt8]?, at time: Date) -> StatusUndetermined? {
        let key = AuthorizationKey(anchor: query.issuingAnchor, documentSigner: query.documentSigner, referenceCertificate: referenceCertificate)
        lock.lock()
        if let known = authorizations[key] {
            lock.unlock()
            return known
        }
        lock.unlock()
        let decided: StatusUndetermined?
        switch ListSignerRule.authorize(token: token, referenceCertificate: referenceCertificate, documentSigner: query.documentSigner,
                                        issuingAnchor: query.issuingAnchor, at: time) {
        case .failure(let error):
            decided = StatusUndetermined(error)
        case .success(let signer):
            do {
                try token.verifySignature(by: signer)
                decided = nil
            } catch {
                decided = StatusUndetermined(error)
            }
        }
        lock.lock()
        if authorizations.count >= Self.maxAuthorizations { authorizations.removeAll(keepingCapacity: true) }
        authorizations[key] = .some(decided)
        lock.unlock()
        return decided
    }
}

extension StatusUndetermined {
    init(_ error: StatusListError) {
        self.init(step: error.step, detail: error.detail)
    }
}
