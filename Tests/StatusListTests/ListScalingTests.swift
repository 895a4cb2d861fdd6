import Foundation
import StatusList
import TestIssuer
import Testing

/// Lists as large as real issuers publish parse whole; the cost per entry
/// is measured elsewhere.
struct ListScalingTests {
    @Test func millionEntryEightBitList() throws {
        let world = try ListWorld()
        var random = TestIssuer.SeededRandom(seed: 20)
        var values = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<4_096 { values[Int(random.next() % UInt64(values.count))] = UInt8(truncatingIfNeeded: random.next() | 1) }
        let token = try ListToken(bytes: world.token(world.publisher(.statusList, .statuses(bits: 8, values))), kind: .statusList)
        let list = try #require(token.statusList)
        #expect(list.count == 1 << 20)
        for index in stride(from: 0, to: values.count, by: 4_099) {
            #expect(list.status(at: UInt64(index)) == values[index])
        }
        #expect(list.status(at: UInt64(values.count)) == nil)
    }

    @Test func millionIdentifiers() throws {
        let world = try ListWorld()
        var random = TestIssuer.SeededRandom(seed: 21)
        let prefix = random.bytes(28)
        let identifiers = (0..<1_000_000).map { (index: UInt32) in prefix + withUnsafeBytes(of: index.bigEndian, Array.init) }
        let bytes = try world.token(world.publisher(.identifierList, .identifiers(identifiers)))
        let token = try ListToken(bytes: bytes, kind: .identifierList)
        let set = try #require(token.identifiers)
        #expect(set.count == identifiers.count)
        for index in stride(from: 0, to: identifiers.count, by: 9_973) {
            #expect(set.contains(identifiers[index]))
        }
        #expect(!set.contains(prefix + [0xff, 0xff, 0xff, 0xff]))
        try token.verifySignature(with: world.listSigner.key.publicKey)
    }
}
