import Foundation
import Testing
@testable import Verification

@Suite struct IssuedNonceTests {
    static let key = IssuedNonce.Key(replayKey: Array(repeating: 0x5A, count: 32))
    static let binding = IssuedNonce.Binding(tenant: "acme", flow: .appleWalletApp, audience: "merchant.com.example.acme")
    static let session = UUID(uuidString: "6F0E2F3A-8B3C-4E1D-9A51-0C7D2B9E4F10")!
    static let issuedAt = Date(timeIntervalSince1970: 1_796_000_000.9)

    @Test func itOpensWithWhatItWasIssuedFor() throws {
        let nonce = Self.key.issue(session: Self.session, binding: Self.binding, issuedAt: Self.issuedAt, lifetime: 600)
        #expect(nonce.bytes.count == IssuedNonce.byteCount)
        #expect(nonce.bytes.count <= 64, "PKIdentityRequest.nonce takes at most 64 bytes")
        #expect(nonce.bytes[0] == 1)
        let opened = try #require(Self.key.open(nonce.bytes, binding: Self.binding))
        #expect(opened == nonce)
        #expect(opened.sessionID == Self.session)
        #expect(opened.issuedAt == Date(timeIntervalSince1970: 1_796_000_000))
        #expect(opened.expiresAt == Date(timeIntervalSince1970: 1_796_000_600))
    }

    @Test func anyOtherBindingIsNotIssued() {
        let nonce = Self.key.issue(session: Self.session, binding: Self.binding, issuedAt: Self.issuedAt, lifetime: 600)
        var others: [IssuedNonce.Binding] = []
        for change in 0..<3 {
            var other = Self.binding
            switch change {
            case 0: other.tenant = "globex"
            case 1: other.flow = .appleWalletWeb
            default: other.audience = "merchant.com.example.other"
            }
            others.append(other)
        }
        // Moving a byte from one field to the next is another binding too.
        // (The flow is an enumeration, so the byte moves between tenant and audience.)
        others.append(.init(tenant: "acm", flow: Self.binding.flow, audience: "e" + Self.binding.audience))
        for other in others { #expect(Self.key.open(nonce.bytes, binding: other) == nil, "\(other)") }
        #expect(IssuedNonce.Key(replayKey: Array(repeating: 0x5B, count: 32)).open(nonce.bytes, binding: Self.binding) == nil, "another key")
    }

    @Test func everyChangedByteIsNotIssued() {
        let nonce = Self.key.issue(session: Self.session, binding: Self.binding, issuedAt: Self.issuedAt, lifetime: 600)
        for index in nonce.bytes.indices {
            var changed = nonce.bytes
            changed[index] ^= 0x01
            #expect(Self.key.open(changed, binding: Self.binding) == nil, "byte \(index)")
        }
        #expect(Self.key.open(Array(nonce.bytes.dropLast()), binding: Self.binding) == nil)
        #expect(Self.key.open(nonce.bytes + [0], binding: Self.binding) == nil)
        #expect(Self.key.open([], binding: Self.binding) == nil)
        #expect(Self.key.open(Array(repeating: 1, count: IssuedNonce.byteCount), binding: Self.binding) == nil)
    }

    @Test func twoSessionsGetDifferentNonces() {
        let one = Self.key.issue(session: UUID(), binding: Self.binding, issuedAt: Self.issuedAt, lifetime: 60)
        let two = Self.key.issue(session: UUID(), binding: Self.binding, issuedAt: Self.issuedAt, lifetime: 60)
        #expect(one.bytes != two.bytes)
        #expect(one.sessionID != two.sessionID)
    }
}
