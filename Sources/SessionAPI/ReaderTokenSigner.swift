import Crypto
import Foundation
import JOSE
import JSON
import Verification

/// Signs the reader tokens the ProximityReader Verifier API takes in
/// `prepare`: a compact JWS (RFC 7515) of a JWT (RFC 7519), ES256 with the
/// raw 64-byte r‖s signature, base64url without padding. The header names
/// the key Apple Business Register holds (`kid`); the claims are the brand
/// (`iss`), the device's reader instance (`sub`), Apple's audience, and a
/// lifetime of at most 300 s, which Apple's rule caps.
public struct ReaderTokenSigner: Sendable {
    public static let audience = "apple-identityservices-v1"
    public static let maxLifetime: TimeInterval = 300

    public let brandID: String
    public let keyID: String
    let key: PrivateKey
    let lifetime: TimeInterval

    public struct Token: Sendable, Equatable {
        public let compact: String
        public let issuedAt: Date
        public let expiresAt: Date
    }

    /// `key` must be a P-256 key; `lifetime` is cut to `maxLifetime`.
    public init(brandID: String, keyID: String, key: PrivateKey, lifetime: TimeInterval = maxLifetime) throws(CryptoError) {
        guard key.publicKey.curve == .p256 else { throw .invalidKey("reader tokens are ES256: the signing key must be P-256") }
        self.brandID = brandID
        self.keyID = keyID
        self.key = key
        self.lifetime = min(max(lifetime, 1), Self.maxLifetime)
    }

    public func token(readerInstanceIdentifier: String, now: Date = Date()) throws(CryptoError) -> Token {
        // Whole seconds: NumericDate (RFC 7519 §2); exp is iat + lifetime, never later.
        let issued = now.timeIntervalSince1970.rounded(.down)
        let expires = issued + lifetime.rounded(.down)
        let header: JSONObject = ["alg": "ES256", "kid": .string(keyID), "typ": "JWT"]
        let claims: JSONObject = [
            "iss": .string(brandID), "sub": .string(readerInstanceIdentifier), "aud": .string(Self.audience),
            "iat": .integer(Int(issued)), "exp": .integer(Int(expires)),
        ]
        let compact = try CompactJWS.signES256(header: header, payload: JSONValue.object(claims).jsonBytes(keyOrder: .insertion), key: key)
        return Token(compact: compact, issuedAt: Date(timeIntervalSince1970: issued), expiresAt: Date(timeIntervalSince1970: expires))
    }
}
