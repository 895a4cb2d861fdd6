import Crypto
import Foundation
import MDoc
import Settings
import Verification

/// What the session API knows of each tenant, loaded once from the settings:
/// the keyring of API key hashes, each tenant's reader-token signer, and what
/// its sessions may ask for.
public struct APITenants: Sendable {
    public let keyring: APIKeyring
    /// By tenant id's bytes (`IdentityRule`), as the worker's `TenantDirectory`.
    let signers: [Identifier: ReaderTokenSigner]
    let sessions: [Identifier: SessionTenant]
    public let ids: [String]

    init(keyring: APIKeyring, signers: [Identifier: ReaderTokenSigner], sessions: [Identifier: SessionTenant] = [:], ids: [String]) {
        self.keyring = keyring
        self.signers = signers
        self.sessions = sessions
        self.ids = ids
    }

    /// Reads every tenant's API keys and opens each reader-token key file,
    /// which must be a P-256 private key only its owner can read.
    public static func load(_ settings: VeridocSettings) throws(ConfigError) -> APITenants {
        var hashes: [String: [String]] = [:]
        var signers: [Identifier: ReaderTokenSigner] = [:]
        var sessions: [Identifier: SessionTenant] = [:]
        for tenant in settings.tenants {
            hashes[tenant.id] = tenant.apiKeyHashes
            guard let tokens = tenant.readerTokens else { continue }
            let setting = "\(tenant.path).readerTokens.signingKey"
            let url = settings.resolve(tokens.signingKey)
            let key = try KeyFile.privateKey(url, setting: setting)
            guard let signer = try? ReaderTokenSigner(brandID: tokens.brandID, keyID: tokens.keyID, key: key,
                                                      lifetime: TimeInterval(settings.serve.readerTokenSeconds)) else {
                throw ConfigError("\(setting): reader tokens are ES256, so the key must be a P-256 key")
            }
            signers[Identifier(tenant.id)] = signer
        }
        for tenant in settings.tenants { sessions[Identifier(tenant.id)] = try SessionTenant(tenant, settings: settings) }
        let keyring = APIKeyring(hashes: hashes)
        return APITenants(keyring: keyring, signers: signers, sessions: sessions, ids: settings.tenants.map(\.id))
    }
}
