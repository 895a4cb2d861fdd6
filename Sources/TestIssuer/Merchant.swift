import Crypto
import Foundation
import MDoc
import Settings
import Verification

extension TestIssuer {
    /// One tenant's own material: the Apple merchant and team identifiers, the
    /// web origin, and two P-256 encryption keys. `current` is the key new
    /// requests use; `rotated` is the previous one, still configured so that
    /// requests sealed to it before the rotation drain.
    public struct Merchant: Sendable {
        public let tenantID: String
        public let merchantID: String
        public let teamID: String
        public let origin: String
        public let currentKey: PrivateKey
        public let rotatedKey: PrivateKey
        public var maxRequestAgeSeconds: Int
        /// The tenant's registered proximity reader (`readers`), whose signature
        /// lets a device MAC count; nil for a merchant restored without one.
        public let readerKey: PrivateKey?

        /// The id the merchant's reader is registered under.
        public static let readerID = "test-reader-1"

        public enum KeySlot: Sendable, CaseIterable {
            case current
            case rotated
        }

        public init(
            tenantID: String = "acme", merchantID: String = "merchant.com.example.acme", teamID: String = "TEAM123456",
            origin: String = "https://shop.example.com", maxRequestAgeSeconds: Int = 600
        ) throws {
            self.tenantID = tenantID
            self.merchantID = merchantID
            self.teamID = teamID
            self.origin = origin
            self.maxRequestAgeSeconds = maxRequestAgeSeconds
            currentKey = try PrivateKey.generate(curve: .p256)
            rotatedKey = try PrivateKey.generate(curve: .p256)
            readerKey = try PrivateKey.generate(curve: .p256)
        }

        /// A merchant restored from its saved keys (a load-generator fixture).
        public init(tenantID: String, merchantID: String, teamID: String, origin: String, maxRequestAgeSeconds: Int, currentKey: PrivateKey, rotatedKey: PrivateKey,
                    readerKey: PrivateKey? = nil) {
            self.readerKey = readerKey
            self.tenantID = tenantID
            self.merchantID = merchantID
            self.teamID = teamID
            self.origin = origin
            self.maxRequestAgeSeconds = maxRequestAgeSeconds
            self.currentKey = currentKey
            self.rotatedKey = rotatedKey
        }

        /// `readerAuthentication` as the merchant's registered reader signs a
        /// submission of these bytes at `signedAt` (`ReaderAttestation`); nil without a reader key.
        public func readerAuthentication(response: [UInt8], transcript: [UInt8], ephemeralReaderKey: [UInt8]?, signedAt: Date) throws -> [String: String]? {
            guard let signingKey = readerKey else { return nil }
            let time = RFC3339.string(from: signedAt)
            let signed = ReaderAttestation.signedBytes(
                tenant: tenantID, readerID: Self.readerID, signedAtText: time, response: response, transcript: transcript, readerKey: ephemeralReaderKey)
            let signature = try signingKey.signature(for: signed, hash: .sha256)
            return ["readerId": Self.readerID, "signedAt": time, "signature": Data(signature).base64EncodedString()]
        }

        public func key(_ slot: KeySlot) -> PrivateKey {
            slot == .current ? currentKey : rotatedKey
        }

        /// The tenant as the verifier sees it, trusting `anchors` (IACA certificates;
        /// test roots when `testConditions` makes it a test tenant).
        public func tenant(trusting anchors: [Certificate], requireIssuedNonces: Bool = false, testConditions: TestConditions? = nil,
                           statusPolicy: TenantSettings.StatusPolicy = .init()) throws -> Tenant {
            Tenant(
                id: tenantID, merchantIDs: [merchantID], teamID: teamID,
                keys: [try TenantKey(currentKey), try TenantKey(rotatedKey)], trustAnchors: anchors,
                origins: [origin], maxRequestAge: TimeInterval(maxRequestAgeSeconds), requireIssuedNonces: requireIssuedNonces,
                testConditions: testConditions, readers: readerKey.map { [Self.readerID: $0.publicKey] } ?? [:], statusPolicy: statusPolicy)
        }

        /// A verifier serving only this tenant.
        public func verifier(trusting anchors: [Certificate]) throws -> Verifier {
            Verifier(directory: TenantDirectory([try tenant(trusting: anchors)]))
        }
    }
}
