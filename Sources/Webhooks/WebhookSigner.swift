import Crypto
import Foundation

/// Standard Webhooks signatures: over `id.timestamp.body`, the exact bytes
/// sent, `v1,` and the base64 HMAC-SHA256 under each `whsec_` secret (all
/// of them, so a receiver may move from one secret to the next), and `v1a,`
/// and the base64 Ed25519 signature under each of the endpoint's signing
/// keys (likewise: old and new sign while receivers move to the new one).
public struct WebhookSigner: Sendable {
    /// The decoded `whsec_` secrets.
    let secrets: [[UInt8]]
    let signingKeys: [PrivateKey]

    public init(secrets: [[UInt8]], signingKeys: [PrivateKey] = []) {
        self.secrets = secrets
        self.signingKeys = signingKeys
    }

    /// The `webhook-signature` header's value: space-separated signatures.
    public func signature(id: String, timestamp: Int, body: [UInt8]) throws(CryptoError) -> String {
        let content = Array("\(id).\(timestamp).".utf8) + body
        var signatures = secrets.map { "v1," + Data(HMAC.authenticationCode(.sha256, key: $0, data: content)).base64EncodedString() }
        for key in signingKeys {
            signatures.append("v1a," + Data(try key.signature(for: content, hash: .sha256)).base64EncodedString())
        }
        return signatures.joined(separator: " ")
    }

    /// The headers of one delivery attempt: `webhook-id` is the CloudEvent's
    /// id (the same on every attempt), `webhook-timestamp` this attempt's time.
    public func headers(id: String, timestamp: Int, body: [UInt8]) throws(CryptoError) -> [(String, String)] {
        [("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", try signature(id: id, timestamp: timestamp, body: body))]
    }

    /// The Ed25519 public keys as Standard Webhooks writes them (`whpk_` and the 32 bytes in base64), in the configured order.
    public var publicKeys: [String] { publicKeyBytes.map(Self.standardPublicKey) }

    /// Each Ed25519 public key's 32 bytes, in the configured order.
    public var publicKeyBytes: [[UInt8]] { signingKeys.compactMap { $0.publicKey.ed25519Raw } }

    /// `whpk_` and the key's bytes in base64.
    public static func standardPublicKey(_ bytes: [UInt8]) -> String { "whpk_" + Data(bytes).base64EncodedString() }
}
