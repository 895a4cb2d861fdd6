import Crypto
import Foundation

/// Standard Webhooks signatures: over `id.timestamp.body`, the exact bytes
/// sent, `v1,` and the base64 HMAC-SHA256 under each `whsec_` secret (all
/// of them, so a receiver may move from one secret to the next), and `v1a,`
/// and the base64 Ed25519 signature under the endpoint's signing key.
public struct WebhookSigner: Sendable {
    /// The decoded `whsec_` secrets.
    let secrets: [[UInt8]]
    let signingKey: PrivateKey?

    public init(secrets: [[UInt8]], signingKey: PrivateKey?) {
        self.secrets = secrets
        self.signingKey = signingKey
    }

    /// The `webhook-signature` header's value: space-separated signatures.
    public func signature(id: String, timestamp: Int, body: [UInt8]) throws(CryptoError) -> String {
        let content = Array("\(id).\(timestamp).".utf8) + body
        var signatures = secrets.map { "v1," + Data(HMAC.authenticationCode(.sha256, key: $0, data: content)).base64EncodedString() }
        if let signingKey {
            signatures.append("v1a," + Data(try signingKey.signature(for: content, hash: .sha256)).base64EncodedString())
        }
        return signatures.joined(separator: " ")
    }

    /// The headers of one delivery attempt: `webhook-id` is the CloudEvent's
    /// id (the same on every attempt), `webhook-timestamp` this attempt's time.
    public func headers(id: String, timestamp: Int, body: [UInt8]) throws(CryptoError) -> [(String, String)] {
        [("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", try signature(id: id, timestamp: timestamp, body: body))]
    }

    /// The Ed25519 public key as Standard Webhooks writes it (`whpk_` and its 32 bytes in base64); nil without a signing key.
    public var publicKey: String? {
        publicKeyBytes.map(Self.standardPublicKey)
    }

    /// The Ed25519 public key's 32 bytes; nil without a signing key.
    public var publicKeyBytes: [UInt8]? { signingKey?.publicKey.ed25519Raw }

    /// `whpk_` and the key's bytes in base64.
    public static func standardPublicKey(_ bytes: [UInt8]) -> String { "whpk_" + Data(bytes).base64EncodedString() }
}
