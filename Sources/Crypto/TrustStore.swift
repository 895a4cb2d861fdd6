import COpenSSL

import Foundation

/// A set of trust anchors (IACA roots, intermediates or pinned document-signer
/// certificates) and RFC 5280 path validation against them, done by OpenSSL.
public struct TrustStore: Sendable {
    /// Every certificate a path may end at: the roots and the pinned signers.
    public let anchors: [Certificate]
    /// Document-signer certificates trusted as they are, on purpose: public
    /// vectors and early wallets whose signers lack the Annex B profile, or
    /// whose IACA is not published. Only these may be the leaf of a path of
    /// one; any other anchor presented as the signer is refused.
    public let pinnedSigners: [Certificate]
    private let store: SharedX509Store?
    /// Names the set of anchors, whatever their order: stores with equal sets
    /// give equal answers, so they share remembered paths (every tenant that
    /// trusts the same IACAs validates a document signer once, not once each).
    let anchorSetID: [UInt8]

    public init(anchors: [Certificate], pinnedSigners: [Certificate] = []) {
        let anchors = anchors + pinnedSigners
        self.anchors = anchors
        self.pinnedSigners = pinnedSigners
        self.store = SharedX509Store(anchors: anchors)
        anchorSetID = HashAlgorithm.sha256.hash(Set(anchors.map(\.sha256Fingerprint)).sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
    }

    /// Whether `certificate` is one of the pinned document signers.
    public func isPinnedSigner(_ certificate: Certificate) -> Bool {
        pinnedSigners.contains(certificate)
    }

    /// Whether `certificate` is a trust anchor that is not a pinned signer: an
    /// IACA (or intermediate), which ISO 18013-5 lets issue document signers
    /// but never sign an MSO itself.
    public func isAnchorOnly(_ certificate: Certificate) -> Bool {
        !pinnedSigners.contains(certificate) && anchors.contains(certificate)
    }

    /// Builds and verifies a path from `leaf` (with the untrusted `intermediates`) to one of the anchors, at `time`.
    ///
    /// Anchors need not be self-signed: a pinned document-signer certificate (itself the leaf)
    /// or an intermediate is a valid anchor. Purpose and EKU checks are off (ISO 18013-5 uses
    /// its own EKUs; `DocumentSignerProfile` checks those). Every certificate in the path,
    /// the anchor included, must be valid at `time`, and unknown critical extensions fail.
    /// On success the path runs leaf … anchor.
    ///
    /// A path that verified once is remembered with the window in which every
    /// certificate on it is valid: the answer depends only on the certificates,
    /// the anchors and the time, so a later request at a time inside that
    /// window gets the same answer without another signature check. Failures
    /// are not remembered (hostile input must not fill the cache).
    public func validate(leaf: Certificate, intermediates: [Certificate], at time: Date) -> Result<[Certificate], ChainValidationError> {
        let key = VerifiedPathCache.key(leaf, intermediates, anchorSetID: anchorSetID)
        if let path = VerifiedPathCache.shared.path(for: key, at: time) { return .success(path) }
        let result = verify(leaf: leaf, intermediates: intermediates, at: time)
        if case .success(let path) = result { VerifiedPathCache.shared.remember(path, for: key) }
        return result
    }

    private func verify(leaf: Certificate, intermediates: [Certificate], at time: Date) -> Result<[Certificate], ChainValidationError> {
        guard let store else { return .failure(.untrusted("the trust store could not be created")) }
        guard let context = X509_STORE_CTX_new() else { return .failure(.untrusted("OpenSSL: \(lastOpenSSLError())")) }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = OPENSSL_sk_new_null() else { return .failure(.untrusted("OpenSSL: \(lastOpenSSLError())")) }
        // The stack borrows the X509 pointers (no up-ref): the certificates outlive this call.
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in intermediates {
            guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.handle.pointer)) > 0 else {
                return .failure(.untrusted("OpenSSL: \(lastOpenSSLError())"))
            }
        }

        // Certificates only cross into OpenSSL here; keep them alive until it is done.
        return withExtendedLifetime((leaf, intermediates)) {
            guard X509_STORE_CTX_init(context, store.pointer, leaf.handle.pointer, untrusted) == 1 else {
                return .failure(.untrusted("OpenSSL: \(lastOpenSSLError())"))
            }
            // The context has its own copy of the store's parameters, so the time stays per call.
            X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), checkTime(time))

            guard X509_verify_cert(context) == 1 else {
                ERR_clear_error()
                return .failure(ChainValidationError(failedContext: context))
            }
            guard let chain = X509_STORE_CTX_get0_chain(context) else {
                return .failure(.untrusted("OpenSSL returned no chain"))
            }
            let known = [leaf] + intermediates + anchors
            var path: [Certificate] = []
            for index in 0..<OPENSSL_sk_num(chain) {
                guard let raw = OPENSSL_sk_value(chain, index) else { continue }
                let pointer = OpaquePointer(raw)
                if let certificate = known.first(where: { $0.handle.pointer == pointer }) {
                    path.append(certificate)
                } else if let certificate = try? Certificate(encoding: pointer) {
                    path.append(certificate)
                }
            }
            return .success(path)
        }
    }
}

public enum ChainValidationError: Error, Equatable, Sendable {
    /// No path to any anchor: unknown issuer, a self-signed certificate that is not an anchor, …
    case untrusted(String)
    /// A path exists but a certificate on it is unacceptable: expired, not yet valid, bad
    /// signature, CA or basic-constraints violation, unhandled critical extension, …
    case certificateInvalid(String)

    /// What failed, naming the certificate by depth and common name; no other subject data.
    public var detail: String {
        switch self {
        case .untrusted(let detail), .certificateInvalid(let detail): detail
        }
    }

    init(failedContext context: OpaquePointer) {
        let code = X509_STORE_CTX_get_error(context)
        let depth = X509_STORE_CTX_get_error_depth(context)
        let reason = X509_verify_cert_error_string(Int(code)).map {
            String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self)
        } ?? "verify error \(code)"
        let name = X509_STORE_CTX_get_current_cert(context)
            .flatMap { DistinguishedName(x509Name: X509_get_subject_name($0)).commonName }
            .map { "\"\($0)\"" } ?? "without common name"
        let detail = "certificate at depth \(depth) (\(name)): \(reason) (X509_V_ERR \(code))"
        self = Self.noPathErrors.contains(code) ? .untrusted(detail) : .certificateInvalid(detail)
    }

    /// Verify errors meaning no path reaches an anchor, as opposed to a bad certificate on a path.
    private static let noPathErrors: Set<Int32> = [
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
        X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
        X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
        X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
        X509_V_ERR_CERT_UNTRUSTED,
        X509_V_ERR_CERT_REJECTED,
        X509_V_ERR_CERT_CHAIN_TOO_LONG,
    ]
}

/// The `X509_STORE` every validation shares, built once with the anchors and flags.
///
/// Sendable: after `init` nothing modifies the store. `X509_STORE_CTX_init` copies its
/// verification parameters into each context (so per-call times never touch it), and
/// OpenSSL guards the store's certificate lookups with the store's own lock, so any
/// number of contexts may verify against it at once.
private final class SharedX509Store: @unchecked Sendable {
    let pointer: OpaquePointer

    init?(anchors: [Certificate]) {
        guard let store = X509_STORE_new() else { return nil }
        pointer = store
        for anchor in anchors where X509_STORE_add_cert(store, anchor.handle.pointer) != 1 {
            // Only allocation failure gets here (duplicates are accepted); an
            // incomplete anchor set must not pass as a complete one.
            ERR_clear_error()
            return nil
        }
        // PARTIAL_CHAIN: an anchor ends the path even if it is not self-signed (pinned DS).
        // X509_STRICT: RFC 5280 profile checks on CA certificates (critical BC, key usage,
        // key identifiers) and rejects explicit EC curve parameters.
        // No purpose is set, so OpenSSL does not check EKUs.
        let flags = UInt(X509_V_FLAG_PARTIAL_CHAIN) | UInt(X509_V_FLAG_X509_STRICT)
        guard X509_STORE_set_flags(store, flags) == 1 else { return nil }
    }

    deinit {
        X509_STORE_free(pointer)
    }
}

/// Whole seconds, clamped so a far-future or non-finite `Date` cannot trap.
private func checkTime(_ date: Date) -> time_t {
    let seconds = date.timeIntervalSince1970.rounded(.down)
    guard seconds.isFinite else { return seconds > 0 ? time_t.max : time_t.min }
    if seconds >= Double(time_t.max) { return time_t.max }
    if seconds <= Double(time_t.min) { return time_t.min }
    return time_t(seconds)
}

/// Paths that verified, keyed by the anchor set and the certificates
/// presented, with the time window in which all of them are valid. One per
/// process, shared by every trust store. Bounded: when full it starts over.
final class VerifiedPathCache: @unchecked Sendable {
    static let shared = VerifiedPathCache(capacity: 16_384)

    // Guarded by `lock`.
    private let lock = NSLock()
    private var entries: [[UInt8]: (path: [Certificate], notBefore: Date, notAfter: Date)] = [:]
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    static func key(_ leaf: Certificate, _ intermediates: [Certificate], anchorSetID: [UInt8]) -> [UInt8] {
        var material = anchorSetID + leaf.sha256Fingerprint
        for certificate in intermediates { material += certificate.sha256Fingerprint }
        return intermediates.isEmpty ? material : HashAlgorithm.sha256.hash(material)
    }

    func path(for key: [UInt8], at time: Date) -> [Certificate]? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries[key], entry.notBefore <= time, time <= entry.notAfter else { return nil }
        return entry.path
    }

    func remember(_ path: [Certificate], for key: [UInt8]) {
        guard let notBefore = path.map(\.notBefore).max(), let notAfter = path.map(\.notAfter).min() else { return }
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = (path, notBefore, notAfter)
    }
}
