import Crypto
import Verification

extension Tenant {
    /// What a web session's EncryptionInfo names: the public half of the
    /// tenant's first encryption key, which the worker decrypts with; nil for
    /// a tenant without origins (it has no web sessions).
    var webRecipient: PublicKey? {
        guard !origins.isEmpty else { return nil }
        return keys.first?.privateKey.publicKey
    }

    /// Whether an apple-wallet-web session offers OpenID4VP beside Annex C:
    /// the tenant lists it and can make such requests.
    var webSessionsOfferOpenID4VP: Bool {
        makesOpenID4VPRequests && digitalCredentialsProtocols.contains(.openID4VP)
    }
}
