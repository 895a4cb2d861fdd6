import Foundation

/// A signer whose certificates bound when it may sign: a request signed
/// outside them is one a wallet refuses.
public protocol CertifiedSigner: Sendable {
    /// When the last of its certificates becomes valid; nil when unknown.
    var notBefore: Date? { get }
    /// When the first of its certificates expires; nil when unknown.
    var notAfter: Date? { get }
}

/// The signers one tenant holds for one purpose (its web reader, its
/// OpenID4VP verifier), so that a renewed certificate can be configured
/// before the one it replaces expires and take over without a gap.
public struct SignerRotation<Signer: CertifiedSigner>: Sendable {
    /// As configured; never empty.
    public let signers: [Signer]

    /// Nil for no signers: a rotation of none is no signer at all.
    public init?(_ signers: [Signer]) {
        guard !signers.isEmpty else { return nil }
        self.signers = signers
    }

    /// The signer for a session from `start` to `end`: of those valid over
    /// the whole session, the one that became valid last, so a renewed
    /// certificate is used from the moment it is valid. Nil when none
    /// covers the session.
    public func signer(from start: Date, through end: Date) -> Signer? {
        var chosen: Signer?
        for signer in signers where (signer.notBefore ?? .distantPast) <= start && (signer.notAfter ?? .distantFuture) > end {
            if let current = chosen, (current.notBefore ?? .distantPast) >= (signer.notBefore ?? .distantPast) { continue }
            chosen = signer
        }
        return chosen
    }

    /// When the last of them expires: until then some signer may still be
    /// usable, so this is what an expiry alert watches. Nil when one never
    /// reads as expiring.
    public var notAfter: Date? {
        var latest = Date.distantPast
        for signer in signers {
            guard let notAfter = signer.notAfter else { return nil }
            latest = max(latest, notAfter)
        }
        return latest
    }
}
