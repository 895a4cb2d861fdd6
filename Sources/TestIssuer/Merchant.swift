import Crypto
import Foundation
import MDoc
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
        }

        /// A merchant restored from its saved keys (a load-generator fixture).
        public init(tenantID: String, merchantID: String, teamID: String, origin: String, maxRequestAgeSeconds: Int, currentKey: PrivateKey, rotatedKey: PrivateKey) {
            self.tenantID = tenantID
            self.merchantID = merchantID
            self.teamID = teamID
            self.origin = origin
            self.maxRequestAgeSeconds = maxRequestAgeSeconds
            self.currentKey = currentKey
            self.rotatedKey = rotatedKey
        }

        public func key(_ slot: KeySlot) -> PrivateKey {
            slot == .current ? currentKey : rotatedKey
        }

        /// The tenant as the verifier sees it, trusting `anchors` (IACA certificates;
        /// test roots when `testConditions` makes it a test tenant).
        public func tenant(trusting anchors: [Certificate], requireIssuedNonces: Bool = false, testConditions: TestConditions? = nil) throws -> Tenant {
            Tenant(
                id: tenantID, merchantIDs: [merchantID], teamID: teamID,
                keys: [try TenantKey(currentKey), try TenantKey(rotatedKey)], trustAnchors: anchors,
                origins: [origin], maxRequestAge: TimeInterval(maxRequestAgeSeconds), requireIssuedNonces: requireIssuedNonces,
                testConditions: testConditions)
        }

        /// A verifier serving only this tenant.
        public func verifier(trusting anchors: [Certificate]) throws -> Verifier {
            Verifier(directory: TenantDirectory([try tenant(trusting: anchors)]))
        }
    }
}
