import Crypto
import Foundation
import Testing

/// Which of a tenant's signers signs a session: the newest valid over the
/// whole session, none when no signer covers it.
@Suite struct SignerRotationTests {
    struct Signer: CertifiedSigner, Equatable {
        let name: String
        let notBefore: Date?
        let notAfter: Date?
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400
    static let old = Signer(name: "old", notBefore: now - 300 * day, notAfter: now + 10 * day)
    static let renewed = Signer(name: "renewed", notBefore: now - day, notAfter: now + 90 * day)
    static let future = Signer(name: "future", notBefore: now + 5 * day, notAfter: now + 200 * day)

    @Test func theNewestSignerValidForTheWholeSessionSigns() throws {
        let rotation = try #require(SignerRotation([Self.old, Self.renewed, Self.future]))
        // The renewed certificate takes over as soon as it is valid; one not yet valid is not used.
        #expect(rotation.signer(from: Self.now, through: Self.now + 600) == Self.renewed)
        // The order of configuration does not matter.
        #expect(try #require(SignerRotation([Self.renewed, Self.old])).signer(from: Self.now, through: Self.now + 600) == Self.renewed)
        // Alone, the old one signs until a session would outlive it.
        let alone = try #require(SignerRotation([Self.old]))
        #expect(alone.signer(from: Self.now, through: Self.now + 9 * Self.day) == Self.old)
        #expect(alone.signer(from: Self.now, through: Self.now + 10 * Self.day) == nil)
        #expect(alone.signer(from: Self.now + 11 * Self.day, through: Self.now + 11 * Self.day + 60) == nil)
        // A session that starts once the future one is valid is signed by it.
        #expect(rotation.signer(from: Self.now + 6 * Self.day, through: Self.now + 6 * Self.day + 60) == Self.future)
        // Only a future signer: nothing signs today.
        #expect(try #require(SignerRotation([Self.future])).signer(from: Self.now, through: Self.now + 60) == nil)
    }

    @Test func theRotationExpiresWithItsLastSigner() throws {
        #expect(SignerRotation([Signer]()) == nil)
        #expect(try #require(SignerRotation([Self.old, Self.future, Self.renewed])).notAfter == Self.future.notAfter)
        let unknown = Signer(name: "unread", notBefore: nil, notAfter: nil)
        #expect(try #require(SignerRotation([Self.old, unknown])).notAfter == nil)
        // Unknown dates do not bound a signer.
        #expect(try #require(SignerRotation([unknown])).signer(from: Self.now, through: Self.now + 365 * Self.day) == unknown)
    }
}
