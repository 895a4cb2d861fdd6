import Crypto
import Foundation
import Settings
import Verification

/// What a tenant's sessions may ask for: its merchant identifiers (app),
/// its origins and the public key responses are encrypted to (web), and the
/// longest a session may live.
struct SessionTenant: Sendable {
    let merchantIDs: Set<String>
    let origins: Set<String>
    /// The tenant's first encryption key, public half: what EncryptionInfo names.
    let recipient: PublicKey?
    let maxSessionSeconds: Int

    init(_ tenant: TenantSettings, settings: VeridocSettings) throws(ConfigError) {
        merchantIDs = Set(tenant.merchantIDs)
        origins = Set(tenant.origins)
        maxSessionSeconds = tenant.maxSessionSeconds ?? min(tenant.maxRequestAgeSeconds ?? 600, TenantSettings.maxSessionSecondsLimit)
        guard !tenant.origins.isEmpty, let first = tenant.encryptionKeys.first else {
            recipient = nil
            return
        }
        let setting = "\(tenant.path).encryptionKeys[0]"
        let url = settings.resolve(first)
        if let problem = KeyFile.permissionProblem(url) { throw ConfigError("\(setting): private key file \(problem)") }
        guard let key = try? PrivateKey(pemFile: url), key.type == .ec(.p256) else {
            throw ConfigError("\(setting): \(url.path) holds no PEM P-256 private key")
        }
        recipient = key.publicKey
    }
}
