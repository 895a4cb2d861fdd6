/// Verification of signatures by keys the caller already trusts (a document
/// signer that chains to one of the tenant's IACAs), where what repeats
/// across events pays off: a signature that verified is remembered
/// (`VerifiedSignatureMemo`), and the few keys that sign most credentials get
/// fixed-base tables (`SignatureVerifierCache`). A key that is not trusted
/// must not come here, since it would take the places of real ones; it takes
/// `PublicKey.isValidSignature(_:for:hash:)` instead.
public final class TrustedSignatures: Sendable {
    public static let shared = TrustedSignatures(memo: VerifiedSignatureMemo(), tables: .shared)

    public let memo: VerifiedSignatureMemo
    public let tables: SignatureVerifierCache

    public init(memo: VerifiedSignatureMemo, tables: SignatureVerifierCache) {
        self.memo = memo
        self.tables = tables
    }

    /// `key.isValidSignature(signature, for: data, hash: hash)`, answered from
    /// the memo for a signature seen verified before, and otherwise through the
    /// key's table when it has one. Ed25519 keys take the ordinary path.
    public func isValidSignature(_ signature: [UInt8], for data: some Collection<UInt8>, hash: HashAlgorithm, key: PublicKey) -> Bool {
        guard let point = key.uncompressedPoint else { return key.isValidSignature(signature, for: data, hash: hash) }
        let digest = hash.hash(data)
        let entry = VerifiedSignatureMemo.Entry(digest: digest, signature: signature, point: point)
        if memo.contains(entry) { return true }
        guard tables.isValidSignature(signature, digest: digest, key: key) else { return false }
        memo.remember(entry)
        return true
    }
}
