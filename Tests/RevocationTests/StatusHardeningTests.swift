import Crypto
import Foundation
import MDoc
import Revocation
import Settings
import StatusList
import Synchronization
import TestIssuer
import Testing
import TestSupport
import Verification

/// What a red-team pass found and what now holds: a token no document's
/// issuer vouches for neither keeps the issuer's list away nor reaches the
/// shared store; a slow issuer holds only its share of the fetch threads; an
/// expired list is not fetched once per event; an accepted signer is
/// remembered only while its certificates are valid; server text stays out
/// of details.
@Suite struct StatusHardeningTests {
    let served: ServedLists
    var server: ListServer { served.server }

    init() throws { served = try ServedLists() }

    /// A store in memory, recording what it was given.
    final class MemoryStore: SharedListStore, Sendable {
        let saved = Mutex<[String: SharedList]>([:])
        func load(_ source: ListSource, uri: String) -> SharedList? { saved.withLock { $0[uri] } }
        func save(_ source: ListSource, uri: String, _ list: SharedList) { saved.withLock { $0[uri] = list } }
    }

    static func service(retryAfter: TimeInterval = 0.2, store: MemoryStore? = nil) -> StatusService {
        RevocationScenario.service { configuration in
            configuration.failureRetryAfter = retryAfter
            configuration.sharedStore = store
        }
    }

    /// A token signed by a key no IACA certified, whose ttl and exp say "keep me ten years".
    func forged(_ scenario: RevocationScenario, path: String) throws -> [UInt8] {
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(subject: [("CN", "Forged List Signer")], publicKey: key.publicKey,
                                         notBefore: RevocationScenario.now - 86_400, notAfter: RevocationScenario.now + 3_650 * 86_400)
        builder.isCA = false
        builder.keyUsage = .digitalSignature
        let certificate = try builder.selfSigned(with: key)
        let issued = Int64(RevocationScenario.now.timeIntervalSince1970)
        var publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, [0, 0]), subject: server.url(path),
                                                 issuedAt: issued - 60, expiresAt: issued + 3_650 * 86_400, timeToLive: 3_650 * 86_400)
        publisher.timeToLive = 3_650 * 86_400
        return try publisher.signed(by: key, chain: [certificate])
    }

    @Test func aTokenNoIssuerVouchesForIsDroppedAndNeverShared() throws {
        var scenario = try RevocationScenario(seed: 40, server: server)
        let store = MemoryStore()
        let service = Self.service(store: store)
        defer { service.stop() }
        let verifier = try scenario.verifier()
        let reference = RevocationScenario.statusListReference(1, server.url("/forged"))
        server.publish("/forged", try forged(scenario, path: "/forged"), mediaType: "application/statuslist+cwt")
        let first = RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service)
        #expect(first.documentStatus?.cause == "signer")
        // The issuer's own list is back: once the retry window passes, it is read, and it says revoked.
        try scenario.publish(.statuses(bits: 1, [0, 1]), at: "/forged")
        var last: CredentialStatus?
        #expect(try eventually(30, every: 0.1) {
            last = RevocationScenario.verify(try scenario.event(reference), with: verifier, service: service).documentStatus
            return last == .revoked
        }, "last: \(String(describing: last))")
        #expect(server.requests("/forged") >= 2)
        // Only the list an issuer accepted reached the shared store.
        #expect(try eventually(30, every: 0.1) { store.saved.withLock { $0[server.url("/forged")] } != nil })
        let shared = try #require(store.saved.withLock { $0[server.url("/forged")] })
        let token = try ListToken(bytes: shared.token, kind: .statusList)
        #expect(token.statusList?.status(at: 1) == 1, "the forged token was shared")
    }

    @Test func aSlowIssuerHoldsOnlyItsShareOfTheFetchThreads() throws {
        var scenario = try RevocationScenario(seed: 41, server: server)
        let other = try ListServer()
        defer { other.stop() }
        let verifier = try scenario.verifier()
        // More held lists on one host than that host may fetch at once, each waited for by an event.
        let held = (0..<6).map { "/held/\($0)" }
        for path in held {
            try scenario.publish(.statuses(bits: 1, [0]), at: path)
            server.hold(path)
        }
        defer { held.forEach(server.release) }
        for path in held {
            let query = try #require(verifier.verify(eventJSON: try scenario.event(RevocationScenario.statusListReference(0, server.url(path))).json(),
                                                     at: RevocationScenario.now).pendingStatusQueries.first)
            served.service.resolve([query], at: RevocationScenario.now) { _ in }
        }
        #expect(eventually(60) { held.reduce(0) { $0 + server.requests($1) } == 4 }, "the slow host's share is taken")
        // A healthy issuer's list is fetched meanwhile.
        let issued = Int64(RevocationScenario.now.timeIntervalSince1970)
        let publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, [0]), subject: other.url("/healthy"),
                                                 issuedAt: issued - 60, expiresAt: issued + 3_600)
        other.publish("/healthy", try publisher.signed(by: scenario.signer.key, chain: [scenario.signer.certificate]), mediaType: "application/statuslist+cwt")
        let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, other.url("/healthy"))),
                                               with: verifier, service: served.service)
        #expect(result.documentStatus == .valid, "\(result.undeterminedDetail ?? "")")
    }

    @Test func anExpiredListIsNotFetchedOncePerEvent() throws {
        var scenario = try RevocationScenario(seed: 42, server: server)
        let service = Self.service(retryAfter: 600)
        defer { service.stop() }
        let now = Int64(RevocationScenario.now.timeIntervalSince1970)
        try scenario.publish(.statuses(bits: 1, [0]), at: "/expired") { $0.issuedAt = now - 7_200; $0.expiresAt = now - 60 }
        let verifier = try scenario.verifier()
        for _ in 0..<10 {
            let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, server.url("/expired"))),
                                                   with: verifier, service: service)
            #expect(result.documentStatus?.cause == "exp")
        }
        #expect(server.requests("/expired") == 1)
    }

    @Test func anAcceptedSignerIsRememberedOnlyWhileItsCertificateIsValid() throws {
        var scenario = try RevocationScenario(seed: 43, server: server)
        let now = RevocationScenario.now
        let shortLived = try scenario.factory.authority.issuingListSigner(now: now, validity: (now - 86_400)...(now + 3_600))
        try scenario.publish(.statuses(bits: 1, [0]), at: "/short", signer: shortLived)
        let verifier = try scenario.verifier()
        let event = try scenario.event(RevocationScenario.statusListReference(0, server.url("/short")))
        #expect(RevocationScenario.verify(event, with: verifier, service: served.service).documentStatus == .valid)
        // The same query two hours later (as a re-check asks it), when the list signer has expired.
        let queries = verifier.verify(eventJSON: event.json(), at: now).pendingStatusQueries
        #expect(queries.count == 1)
        let answers = served.service.resolve(queries, at: now + 7_200)
        #expect(answers.first?.cause == "signer", "\(answers)")
    }

    @Test func theServersWordsStayOutOfDetails() throws {
        var scenario = try RevocationScenario(seed: 44, server: server)
        server.put("/echo", ListServer.Answer(contentType: "x/echo-secret-4711", body: [0xd2]))
        let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, server.url("/echo"))),
                                               with: try scenario.verifier(), service: served.service)
        #expect(result.documentStatus?.cause == "media_type")
        #expect(!(result.undeterminedDetail ?? "").contains("4711"), "\(result.undeterminedDetail ?? "")")
    }
}

/// A list in use is renewed before its `ttl` runs out: events then find it
/// cached instead of waiting for a fetch.
@Suite struct StatusPrefetchTests {
    @Test func aListInUseIsFetchedAgainAheadOfItsTTL() throws {
        let served = try ServedLists()
        var scenario = try RevocationScenario(seed: 45, server: served.server)
        try scenario.publish(.statuses(bits: 1, [0, 0]), at: "/used") { $0.timeToLive = 120 }
        try scenario.publish(.statuses(bits: 1, [0, 0]), at: "/idle") { $0.timeToLive = 120 }
        let verifier = try scenario.verifier()
        for path in ["/used", "/idle"] {
            let event = try scenario.event(RevocationScenario.statusListReference(0, served.server.url(path)))
            #expect(RevocationScenario.verify(event, with: verifier, service: served.service).documentStatus == .valid)
        }
        // Used within the horizon and stale within it: renewed. A horizon shorter than the ttl renews nothing.
        #expect(served.service.prefetch(horizon: 60) == 0)
        #expect(served.service.prefetch(now: Date() + 100, horizon: 60) == 0, "neither was used within the last minute then")
        #expect(served.service.prefetch(horizon: 300) == 2)
        #expect(eventually(60) { served.server.requests("/used") == 2 && served.server.requests("/idle") == 2 })
    }
}
