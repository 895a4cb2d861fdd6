import Crypto
import Foundation

/// A nonce Veridoc issues for one session (`veridoc serve`), which any worker
/// can check on its own: it is authenticated under a key serve and the
/// workers share, and carries what the check needs, so no lookup stands
/// between an event and its verdict.
///
/// Layout, 45 bytes (PassKit takes at most 64):
///
///     version   1 byte   0x01
///     issuedAt  8 bytes  seconds since 1970, big-endian
///     lifetime  4 bytes  seconds, big-endian (expiry = issuedAt + lifetime)
///     session  16 bytes  the session id (a random UUID)
///     tag      16 bytes  HMAC-SHA-256, cut to 128 bits
///
/// The tag covers the first 29 bytes and the binding, which the nonce does
/// not carry because the event does: the tenant, the flow and the merchant
/// identifier (app) or origin (web). A nonce issued for another tenant,
/// flow, merchant or origin, or changed in any byte, is not one Veridoc
/// issued. Expiry is the check's to judge, at verification time.
public struct IssuedNonce: Sendable, Equatable {
    public static let version: UInt8 = 1
    public static let byteCount = 45
    static let tagCount = 16
    static let headerCount = 29

    /// What the nonce is bound to, taken from the event being verified.
    public struct Binding: Sendable, Equatable {
        public var tenant: String
        public var flow: Flow
        /// The merchant identifier (apple-wallet-app) or the origin (apple-wallet-web).
        public var audience: String

        public init(tenant: String, flow: Flow, audience: String) {
            self.tenant = tenant
            self.flow = flow
            self.audience = audience
        }
    }

    public let sessionID: UUID
    public let issuedAt: Date
    public let expiresAt: Date
    /// The nonce itself, as it goes into PKIdentityRequest.nonce or EncryptionInfo.
    public let bytes: [UInt8]

    /// The key that issues and checks nonces, derived from the replay key
    /// (`replay.nonceKeyFile`) so that serve and the workers share one secret
    /// file, while a tag made for one purpose can never pass for the other.
    public struct Key: Sendable {
        let key: [UInt8]

        public init(replayKey: [UInt8]) {
            // 32 bytes out of HKDF-SHA-256 never fail to expand.
            key = (try? HKDF.deriveKey(.sha256, inputKeyMaterial: replayKey, salt: [], info: Array("veridoc issued nonce v1".utf8), length: 32)) ?? []
        }

        /// A nonce for `session`, valid from `issuedAt` (whole seconds) for `lifetime` seconds.
        public func issue(session: UUID, binding: Binding, issuedAt: Date, lifetime: UInt32) -> IssuedNonce {
            var header: [UInt8] = [IssuedNonce.version]
            header.reserveCapacity(IssuedNonce.byteCount)
            let seconds = UInt64(max(0, issuedAt.timeIntervalSince1970.rounded(.down)))
            header += withUnsafeBytes(of: seconds.bigEndian, Array.init)
            header += withUnsafeBytes(of: lifetime.bigEndian, Array.init)
            header += withUnsafeBytes(of: session.uuid, Array.init)
            let bytes = header + tag(header: header, binding: binding)
            return IssuedNonce(sessionID: session, issuedAt: Date(timeIntervalSince1970: TimeInterval(seconds)),
                               expiresAt: Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(lifetime)), bytes: bytes)
        }

        /// The nonce of `nonce`'s session, time and lifetime under another
        /// binding: a web session offering two protocols holds one nonce per
        /// protocol's flow, and derives the second from the first.
        public func sibling(of nonce: IssuedNonce, binding: Binding) -> IssuedNonce {
            let lifetime = UInt32(clamping: Int(nonce.expiresAt.timeIntervalSince(nonce.issuedAt)))
            return issue(session: nonce.sessionID, binding: binding, issuedAt: nonce.issuedAt, lifetime: lifetime)
        }

        /// The nonce, if Veridoc issued these bytes for this binding; nil for
        /// anything else (another length or version, another binding, another key).
        public func open(_ bytes: [UInt8], binding: Binding) -> IssuedNonce? {
            guard bytes.count == IssuedNonce.byteCount, bytes[0] == IssuedNonce.version else { return nil }
            let header = Array(bytes[..<IssuedNonce.headerCount])
            guard constantTimeEqual(Array(bytes[IssuedNonce.headerCount...]), tag(header: header, binding: binding)) else { return nil }
            let seconds = bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let lifetime = bytes[9..<13].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let session = bytes[13..<29].withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            return IssuedNonce(sessionID: session, issuedAt: Date(timeIntervalSince1970: TimeInterval(seconds)),
                               expiresAt: Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(lifetime)), bytes: bytes)
        }

        /// The P-256 key an OpenID4VP session's response is encrypted to
        /// (`client_metadata.jwks`): a key of its own per request, as HAIP
        /// asks, derived from this key and the nonce so that it is never
        /// stored and any worker can derive it again. Call it only for a nonce
        /// `open` accepted: the key is no secret from whoever knows the nonce
        /// unless the nonce is Veridoc's. The label sets these inputs apart
        /// from the tags' (which start with the version byte).
        public func responseKey(for nonce: IssuedNonce) -> PrivateKey? {
            let material = HMAC.authenticationCode(.sha256, key: key, data: Array("veridoc openid4vp response key v1".utf8) + nonce.bytes)
            return try? HPKE.deriveKeyPair(inputKeyMaterial: material)
        }

        private func tag(header: [UInt8], binding: Binding) -> [UInt8] {
            // Each binding field with its length first, so no two bindings
            // spell the same input ("ab"+"c" is not "a"+"bc").
            var input = header
            for field in [binding.tenant, binding.flow.rawValue, binding.audience] {
                let utf8 = Array(field.utf8)
                input += withUnsafeBytes(of: UInt32(utf8.count).bigEndian, Array.init)
                input += utf8
            }
            return Array(HMAC.authenticationCode(.sha256, key: key, data: input).prefix(IssuedNonce.tagCount))
        }
    }
}
