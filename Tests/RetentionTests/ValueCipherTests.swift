import Crypto
import Foundation
import Testing
@testable import Retention

struct ValueCipherTests {
    let ring = try! DataKeyRing(keys: ["k1": secureRandomBytes(32), "k2": secureRandomBytes(32)], activeID: "k2")
    let value = Array("Qwertyuiop-PLANTED-GIVEN".utf8)

    @Test func roundTrip() throws {
        let sealed = try ValueCipher.seal(value, eventID: "e1", namespace: "ns", element: "given_name", keys: ring)
        #expect(sealed.keyID == "k2")
        #expect(sealed.nonce.count == 12)
        #expect(!sealed.ciphertext.windows(ofCount: value.count).contains { Array($0) == value })
        #expect(try ValueCipher.open(sealed, eventID: "e1", namespace: "ns", element: "given_name", keys: ring) == value)
    }

    /// A row moved to another event, element or key id does not decrypt.
    @Test func additionalDataBindsTheRow() throws {
        let sealed = try ValueCipher.seal(value, eventID: "e1", namespace: "ns", element: "given_name", keys: ring)
        #expect(throws: RetentionError.self) { try ValueCipher.open(sealed, eventID: "e2", namespace: "ns", element: "given_name", keys: ring) }
        #expect(throws: RetentionError.self) { try ValueCipher.open(sealed, eventID: "e1", namespace: "ns2", element: "given_name", keys: ring) }
        #expect(throws: RetentionError.self) { try ValueCipher.open(sealed, eventID: "e1", namespace: "ns", element: "family_name", keys: ring) }
        let relabelled = SealedValue(keyID: "k1", nonce: sealed.nonce, ciphertext: sealed.ciphertext)
        #expect(throws: RetentionError.self) { try ValueCipher.open(relabelled, eventID: "e1", namespace: "ns", element: "given_name", keys: ring) }
        // Field boundaries are length-prefixed: "e1"+"ns" ≠ "e1n"+"s".
        #expect(ValueCipher.additionalData(keyID: "k", eventID: "e1", namespace: "ns", element: "x")
                != ValueCipher.additionalData(keyID: "k", eventID: "e1n", namespace: "s", element: "x"))
    }

    @Test func keyFilesReadableByOthersAreRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data.key")
        try DataKeyRing.generateKeyFile(file)
        #expect(try DataKeyRing.loadKeyFile(file).count == 32)
        #expect(throws: RetentionError.self) { try DataKeyRing.generateKeyFile(file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        do {
            _ = try DataKeyRing.loadKeyFile(file)
            Issue.record("a group/world-readable key file was accepted")
        } catch {
            #expect(error.message.contains("readable by other users"))
        }
    }
}

extension Array {
    func windows(ofCount count: Int) -> [ArraySlice<Element>] {
        guard count <= self.count else { return [] }
        return (0...(self.count - count)).map { self[$0..<$0 + count] }
    }
}
