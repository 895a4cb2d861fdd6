import Crypto
import Deployment
import Foundation
import MDoc
import Settings
import Verification
import Webhooks

/// What the session API knows of each tenant, taken from the deployment: the
/// tenants themselves (the worker's `Tenant`: what sessions may ask for), the
/// keyring of API key hashes and each tenant's reader-token signer.
public struct APITenants: Sendable {
    public let keyring: APIKeyring
    /// By tenant id's bytes (`IdentityRule`), as the worker's `TenantDirectory`.
    let signers: [Identifier: ReaderTokenSigner]
    let directory: TenantDirectory
    public let ids: [String]
    /// Each tenant's webhook endpoints that sign with a key (`v1a`), by tenant id's bytes.
    let webhookKeys: [Identifier: [WebhookKey]]

    /// An endpoint's Ed25519 public key, as a receiver verifies `v1a` signatures with it.
    struct WebhookKey: Sendable, Equatable {
        let endpoint: String
        let publicKey: [UInt8]
    }

    init(keyring: APIKeyring, signers: [Identifier: ReaderTokenSigner], directory: TenantDirectory = TenantDirectory([]), ids: [String],
         webhookKeys: [Identifier: [WebhookKey]] = [:]) {
        self.keyring = keyring
        self.signers = signers
        self.directory = directory
        self.ids = ids
        self.webhookKeys = webhookKeys
    }

    /// Serve's view of the deployment's tenants: their API key hashes, and a
    /// reader-token signer for each tenant with a reader-token key.
    public static func load(_ deployment: Deployment) throws(ConfigError) -> APITenants {
        // Apple Wallet refuses a web request without reader authentication:
        // serve would hand out requests that can never be answered.
        for (index, tenant) in deployment.settings.tenants.enumerated()
        where !tenant.origins.isEmpty && tenant.webReaders.isEmpty && tenant.testConditions == nil {
            throw ConfigError("tenants[\(index)].webReader: required for a tenant with origins, whose web requests Apple Wallet refuses unsigned "
                              + "(a test tenant may go without)")
        }
        var hashes: [String: [String]] = [:]
        var signers: [Identifier: ReaderTokenSigner] = [:]
        let lifetime = TimeInterval(deployment.settings.serve.readerTokenSeconds)
        for tenant in deployment.tenants.tenants {
            hashes[tenant.id] = tenant.apiKeyHashes
            guard let tokens = tenant.readerTokenKey else { continue }
            do {
                signers[Identifier(tenant.id)] = try ReaderTokenSigner(brandID: tokens.brandID, keyID: tokens.keyID, key: tokens.signingKey, lifetime: lifetime)
            } catch {
                throw ConfigError("tenant \(tenant.id): readerTokens: \(error)")
            }
        }
        var webhookKeys: [Identifier: [WebhookKey]] = [:]
        for endpoint in deployment.webhooks.endpoints {
            for key in endpoint.signer.publicKeyBytes {
                webhookKeys[Identifier(endpoint.tenant), default: []].append(WebhookKey(endpoint: endpoint.id, publicKey: key))
            }
        }
        return APITenants(keyring: APIKeyring(hashes: hashes), signers: signers, directory: deployment.tenants,
                          ids: deployment.settings.tenants.map(\.id), webhookKeys: webhookKeys)
    }
}
