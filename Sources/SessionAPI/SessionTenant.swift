import Crypto
import Foundation
import MDoc
import Settings
import Verification

/// What a tenant's sessions may ask for: its merchant identifiers (app),
/// its origins and the public key responses are encrypted to (web), and the
/// longest a session may live.
struct SessionTenant: Sendable {
    /// Matched by their bytes, as the worker's `Tenant` matches them (`IdentityRule`).
    private let merchantIDs: Set<Identifier>
    private let origins: Set<Identifier>
    /// The tenant's first encryption key, public half: what EncryptionInfo names.
    let recipient: PublicKey?
    let maxSessionSeconds: Int

    init(_ tenant: TenantSettings, settings: VeridocSettings) throws(ConfigError) {
        merchantIDs = Set(tenant.merchantIDs.map(Identifier.init))
        origins = Set(tenant.origins.map(Identifier.init))
        maxSessionSeconds = tenant.maxSessionSeconds ?? min(tenant.maxRequestAgeSeconds ?? 600, TenantSettings.maxSessionSecondsLimit)
        guard !tenant.origins.isEmpty, let first = tenant.encryptionKeys.first else {
            recipient = nil
            return
        }
        let setting = "\(tenant.path).encryptionKeys[0]"
        let url = settings.resolve(first)
        guard case let key = try KeyFile.privateKey(url, setting: setting), key.type == .ec(.p256) else {
            throw ConfigError("\(setting): \(url.path) holds no PEM P-256 private key")
        }
        recipient = key.publicKey
    }

    /// Whether `merchantID` is, byte for byte, one of the tenant's.
    func owns(merchantID: String) -> Bool { merchantIDs.contains(Identifier(merchantID)) }

    /// Whether `origin` is, byte for byte, one of the tenant's.
    func owns(origin: String) -> Bool { origins.contains(Identifier(origin)) }
}
