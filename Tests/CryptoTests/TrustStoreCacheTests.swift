import Foundation
import Testing
@testable import Crypto

/// The verified-path cache must give exactly the answers a fresh validation gives.
@Suite struct TrustStoreCacheTests {
    @Test func aRememberedPathStillHonoursEveryValidityWindow() throws {
        let rootKey = try PrivateKey.generate(curve: .p256)
        let root = try TestPKI.iaca("Cache IACA", key: rootKey)
        let signer = try TestPKI.documentSigner(key: try PrivateKey.generate(curve: .p256), from: utc("2027-01-01"), to: utc("2028-01-01")).signed(by: root, issuerKey: rootKey)
        let store = TrustStore(anchors: [root])
        let inside = utc("2027-06-01")
        #expect(throws: Never.self) { try store.validate(leaf: signer, intermediates: [], at: inside).get() }
        // Same certificates, now outside the signer's window: a cache hit must not answer.
        guard case .failure(.certificateInvalid) = store.validate(leaf: signer, intermediates: [], at: utc("2028-02-01")) else {
            Issue.record("an expired signer validated from the cache")
            return
        }
        guard case .failure(.certificateInvalid) = store.validate(leaf: signer, intermediates: [], at: utc("2026-06-01")) else {
            Issue.record("a not-yet-valid signer validated from the cache")
            return
        }
        #expect(throws: Never.self) { try store.validate(leaf: signer, intermediates: [], at: utc("2027-12-31")).get() }
    }

    @Test func anotherStoreDoesNotShareTheCache() throws {
        let rootKey = try PrivateKey.generate(curve: .p256)
        let root = try TestPKI.iaca("Cache IACA A", key: rootKey)
        let signer = try TestPKI.documentSigner(key: try PrivateKey.generate(curve: .p256)).signed(by: root, issuerKey: rootKey)
        let at = utc("2027-06-01")
        #expect(throws: Never.self) { try TrustStore(anchors: [root]).validate(leaf: signer, intermediates: [], at: at).get() }
        let otherKey = try PrivateKey.generate(curve: .p256)
        let other = TrustStore(anchors: [try TestPKI.iaca("Cache IACA B", key: otherKey)])
        guard case .failure(.untrusted) = other.validate(leaf: signer, intermediates: [], at: at) else {
            Issue.record("a signer validated against an unrelated anchor")
            return
        }
    }

    @Test func storesWithTheSameAnchorsShareRememberedPaths() throws {
        let keyA = try PrivateKey.generate(curve: .p256)
        let keyB = try PrivateKey.generate(curve: .p256)
        let rootA = try TestPKI.iaca("Shared IACA A", key: keyA)
        let rootB = try TestPKI.iaca("Shared IACA B", key: keyB)
        let signer = try TestPKI.documentSigner(key: try PrivateKey.generate(curve: .p256)).signed(by: rootB, issuerKey: keyB)
        let at = utc("2027-06-01")
        let first = TrustStore(anchors: [rootA, rootB])
        let reordered = TrustStore(anchors: [rootB, rootA, rootB])
        #expect(first.anchorSetID == reordered.anchorSetID)
        #expect(throws: Never.self) { try first.validate(leaf: signer, intermediates: [], at: at).get() }
        let key = VerifiedPathCache.key(signer, [], anchorSetID: reordered.anchorSetID)
        #expect(VerifiedPathCache.shared.path(for: key, at: at) != nil, "the second store's key finds the first store's path")
        // A store trusting only A must not be answered from the path through B.
        let onlyA = TrustStore(anchors: [rootA])
        #expect(onlyA.anchorSetID != first.anchorSetID)
        guard case .failure(.untrusted) = onlyA.validate(leaf: signer, intermediates: [], at: at) else {
            Issue.record("a store without the signer's root validated it from another store's cache")
            return
        }
    }

    @Test func failuresAreNotRemembered() throws {
        let rootKey = try PrivateKey.generate(curve: .p256)
        let root = try TestPKI.iaca("Cache IACA", key: rootKey)
        let signer = try TestPKI.documentSigner(key: try PrivateKey.generate(curve: .p256), from: utc("2027-01-01"), to: utc("2028-01-01")).signed(by: root, issuerKey: rootKey)
        let store = TrustStore(anchors: [root])
        guard case .failure = store.validate(leaf: signer, intermediates: [], at: utc("2026-06-01")) else {
            Issue.record("validated before the signer's window")
            return
        }
        #expect(throws: Never.self) { try store.validate(leaf: signer, intermediates: [], at: utc("2027-06-01")).get() }
    }
}
