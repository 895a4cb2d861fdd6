import Crypto
import Foundation
import MDoc
import Revocation
import Settings
import StatusFetch
import TestIssuer
import Testing
import TestSupport
import Verification

/// `document.status` for X.509 revocation: a document signer or IACA that
/// names a CRL distribution point is checked against the CRL its issuer
/// publishes there, fetched over real HTTP by the status service.
@Suite struct CRLCheckTests {
    let served: ServedLists
    var server: ListServer { served.server }
    var service: StatusService { served.service }
    static let now = RevocationScenario.now

    init() throws { served = try ServedLists() }

    static func policy(_ mode: TenantSettings.StatusPolicy.Mode) -> TenantSettings.StatusPolicy {
        var policy = TenantSettings.StatusPolicy()
        policy.mode = mode
        return policy
    }

    /// A scenario whose document signer (and, when asked, IACA) names CRLs on the server.
    func scenario(seed: UInt64, signer: String? = "/ds.crl", iaca: String? = nil, partial: Bool = false) throws -> RevocationScenario {
        var scenario = try RevocationScenario(seed: seed, server: server)
        scenario.factory.authority = try scenario.factory.authority.namingRevocationLists(
            iaca: iaca.map { [server.url($0)] } ?? [], documentSigner: signer.map { [server.url($0)] } ?? [], partial: partial)
        return scenario
    }

    func publishCRL(_ scenario: RevocationScenario, at path: String, _ entries: [CertificateRevocationListBuilder.Entry] = [],
                    thisUpdate: Date = now - 3_600, nextUpdate: Date? = now + 86_400, key: PrivateKey? = nil, mediaType: String = "application/pkix-crl",
                    edit: (inout CertificateRevocationListBuilder) -> Void = { _ in }) throws {
        let der = try scenario.factory.authority.revocationList(entries, thisUpdate: thisUpdate, nextUpdate: nextUpdate, key: key, edit: edit)
        server.publish(path, der, mediaType: mediaType)
    }

    func verify(_ scenario: inout RevocationScenario, status: MSOStatus? = nil, policy: TenantSettings.StatusPolicy = .init()) throws -> VerificationResult {
        RevocationScenario.verify(try scenario.event(status), with: try scenario.verifier(policy), service: service)
    }

    @Test(arguments: [(Int?.none, CredentialStatus.valid), (1, .revoked), (6, .suspended)])
    func theDocumentSignersCRLDecides(_ reason: Int?, _ expected: CredentialStatus) throws {
        var scenario = try scenario(seed: 40)
        let authority = scenario.factory.authority
        let listed = reason.map { [CertificateRevocationListBuilder.Entry(authority.documentSigner, reason: $0)] } ?? []
        // Another certificate's serial is always on the list: only the signer's own entry may speak.
        let other = try authority.reissuingDocumentSigner(.valid, now: Self.now).documentSigner
        try publishCRL(scenario, at: "/ds.crl", listed + [.init(other, reason: 1)])
        let result = try verify(&scenario)
        #expect(result.documentStatus == expected, "\(result.undeterminedDetail ?? "")")
        switch expected {
        case .valid: #expect(result.verdict == "verified" && result.codes.isEmpty && result.report.status(of: .documentStatus) == .passed)
        case .revoked: #expect(result.verdict == "rejected" && result.codes == [.statusRevoked])
        default: #expect(result.verdict == "rejected" && result.codes == [.statusSuspended])
        }
        #expect(server.requests("/ds.crl") == 1)
    }


    @Test func bothCertificatesAndTheMSOsListAreCheckedAndOneCRLServesManyEvents() throws {
        var scenario = try scenario(seed: 42, signer: "/both/ds.crl", iaca: "/both/iaca.crl")
        try publishCRL(scenario, at: "/both/ds.crl")
        try publishCRL(scenario, at: "/both/iaca.crl")
        try scenario.publish(.statuses(bits: 1, [0, 1]), at: "/both/status")
        let verifier = try scenario.verifier()
        for index in [UInt64(0), 0, 0] {
            let result = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(index, server.url("/both/status"))),
                                                   with: verifier, service: service)
            #expect(result.verdict == "verified" && result.documentStatus == .valid, "\(result.undeterminedDetail ?? "")")
        }
        // The MSO's list still revokes under valid CRLs.
        let revoked = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(1, server.url("/both/status"))), with: verifier, service: service)
        #expect(revoked.codes == [.statusRevoked])
        #expect(server.requests("/both/ds.crl") == 1 && server.requests("/both/iaca.crl") == 1 && server.requests("/both/status") == 1)
    }

    @Test func aCRLNotSignedByTheIssuerIsUndeterminedAndDropped() throws {
        var scenario = try scenario(seed: 43)
        let stranger = try PrivateKey.generate(curve: .p256)
        try publishCRL(scenario, at: "/ds.crl", key: stranger)
        let result = try verify(&scenario)
        #expect(result.codes == [.statusUndetermined] && result.documentStatus?.cause == "crl_signer")
        #expect(result.undeterminedDetail?.contains("the document signer's CRL") == true)
        // bestEffort: verified, and the outcome says undetermined.
        let lenient = try verify(&scenario, policy: Self.policy(.bestEffort))
        #expect(lenient.verdict == "verified" && lenient.documentStatus?.cause == "crl_signer")
    }

    @Test func aStaleOrUndatedCRLSaysNothing() throws {
        var stale = try scenario(seed: 44, signer: "/stale.crl")
        try publishCRL(stale, at: "/stale.crl", thisUpdate: Self.now - 7 * 86_400, nextUpdate: Self.now - 60)
        #expect(try verify(&stale).documentStatus?.cause == "crl_time")
        var future = try scenario(seed: 45, signer: "/future.crl")
        try publishCRL(future, at: "/future.crl", thisUpdate: Self.now + 86_400, nextUpdate: Self.now + 2 * 86_400)
        #expect(try verify(&future).documentStatus?.cause == "crl_time")
        var undated = try scenario(seed: 46, signer: "/undated.crl")
        try publishCRL(undated, at: "/undated.crl", nextUpdate: nil)
        let result = try verify(&undated)
        #expect(result.documentStatus?.cause == "crl" && result.codes == [.statusUndetermined])
    }

    @Test func aCRLThatDoesNotCoverTheCertificateSaysNothing() throws {
        var caOnly = try scenario(seed: 47, signer: "/ca-only.crl")
        try publishCRL(caOnly, at: "/ca-only.crl") {
            $0.extraExtensions = [(TestIssuer.Authority.issuingDistributionPointOID, true, TestIssuer.issuingDistributionPointExtension([], onlyCA: true))]
        }
        #expect(try verify(&caOnly).documentStatus?.cause == "crl_scope")
        var elsewhere = try scenario(seed: 48, signer: "/here.crl")
        try publishCRL(elsewhere, at: "/here.crl") {
            $0.extraExtensions = [(TestIssuer.Authority.issuingDistributionPointOID, true,
                                   TestIssuer.issuingDistributionPointExtension(["https://elsewhere.example/x.crl"]))]
        }
        #expect(try verify(&elsewhere).documentStatus?.cause == "crl_scope")
    }

    @Test func aCertificateNamingOnlyPartialCRLsIsUndeterminedWithoutAFetch() throws {
        var scenario = try scenario(seed: 49, signer: "/partial.crl", partial: true)
        try publishCRL(scenario, at: "/partial.crl")
        let result = try verify(&scenario)
        #expect(result.documentStatus?.cause == "crl_location" && result.codes == [.statusUndetermined])
        #expect(server.requests("/partial.crl") == 0)
    }

    @Test func theWrongFormatOrNoCRLIsUndetermined() throws {
        var html = try scenario(seed: 50, signer: "/html.crl")
        try publishCRL(html, at: "/html.crl", mediaType: "text/html")
        #expect(try verify(&html).documentStatus?.cause == "media_type")
        var token = try scenario(seed: 51, signer: "/token.crl")
        server.publish("/token.crl", try token.token(.statuses(bits: 1, [0]), path: "/token.crl"), mediaType: "application/octet-stream")
        #expect(try verify(&token).documentStatus?.cause == "crl")
        var missing = try scenario(seed: 52, signer: "/missing.crl")
        #expect(try verify(&missing).documentStatus?.cause == "http_status")
        var off = try scenario(seed: 53, signer: "/off.crl")
        let notChecked = try verify(&off, policy: Self.policy(.off))
        #expect(notChecked.verdict == "verified" && notChecked.documentStatus == .notChecked && server.requests("/off.crl") == 0)
    }

    @Test func nothingIsFetchedForARejectedDocument() throws {
        var scenario = try scenario(seed: 54, signer: "/rejected.crl")
        try publishCRL(scenario, at: "/rejected.crl")
        let untrusted = RevocationScenario.verify(try scenario.event(nil), with: try RevocationScenario(seed: 55, server: server).verifier(), service: service)
        #expect(untrusted.verdict == "rejected" && untrusted.documentStatus == nil)
        #expect(server.requests("/rejected.crl") == 0)
    }

    @Test func aCRLMayComeOverPlainHTTPWhereAListTokenMayNot() throws {
        var policy = FetchPolicy(connectTimeout: 30, totalTimeout: 60)
        policy.allowsLoopbackForTests = true
        let strict = StatusService(configuration: StatusService.Configuration(fetch: policy))
        defer { strict.stop() }
        var scenario = try scenario(seed: 56, signer: "/plain.crl")
        try publishCRL(scenario, at: "/plain.crl", [.init(scenario.factory.authority.documentSigner, reason: 1)])
        let revoked = RevocationScenario.verify(try scenario.event(nil), with: try scenario.verifier(), service: strict)
        #expect(revoked.codes == [.statusRevoked], "a signed CRL over http is read: \(revoked.undeterminedDetail ?? "")")
        var plain = try RevocationScenario(seed: 57, server: server)
        try plain.publish(.statuses(bits: 1, [0]), at: "/plain/status")
        let token = RevocationScenario.verify(try plain.event(RevocationScenario.statusListReference(0, server.url("/plain/status"))),
                                              with: try plain.verifier(), service: strict)
        #expect(token.documentStatus?.cause == "fetch" && server.requests("/plain/status") == 0, "a list token needs https")
        // Plain http or not, the address rule holds: without the loopback hook, 127.0.0.1 is never contacted.
        let publicOnly = StatusService(configuration: StatusService.Configuration(fetch: FetchPolicy(connectTimeout: 30, totalTimeout: 60)))
        defer { publicOnly.stop() }
        var refused = try self.scenario(seed: 58, signer: "/loopback.crl")
        try publishCRL(refused, at: "/loopback.crl")
        let loopback = RevocationScenario.verify(try refused.event(nil), with: try refused.verifier(), service: publicOnly)
        #expect(loopback.documentStatus?.cause == "fetch" && server.requests("/loopback.crl") == 0)
    }

    /// Another issuer the tenant trusts names the same CRL URI: its
    /// documents' check of that CRL fails, and must not fail or drop the
    /// CRL for the issuer it belongs to.
    @Test func anotherIssuerNamingTheSameCRLCannotSpoilIt() throws {
        var owner = try scenario(seed: 60, signer: "/shared.crl")
        var other = try RevocationScenario(seed: 61, server: server)
        other.factory.authority = try TestIssuer.Authority(now: Self.now, name: "Other Issuer", state: "NV")
            .namingRevocationLists(documentSigner: [server.url("/shared.crl")])
        try publishCRL(owner, at: "/shared.crl")
        let tenant = try owner.factory.merchant.tenant(trusting: [owner.factory.authority.iaca, other.factory.authority.iaca], statusPolicy: .init())
        let verifier = Verifier(directory: TenantDirectory([tenant]))
        for _ in 0..<2 {
            let spoiler = RevocationScenario.verify(try other.event(nil), with: verifier, service: service)
            #expect(spoiler.documentStatus?.cause == "crl_signer", "\(spoiler.undeterminedDetail ?? "")")
            let owned = RevocationScenario.verify(try owner.event(nil), with: verifier, service: service)
            #expect(owned.verdict == "verified" && owned.documentStatus == .valid, "\(owned.undeterminedDetail ?? "")")
        }
    }

    /// An older CRL than the one already held (a replay, over plain http
    /// perhaps) is not taken: the answer is undetermined until a new one comes.
    @Test func anOlderCRLThanTheOneHeldIsAReplay() throws {
        let eager = RevocationScenario.service { $0.crlRefresh = 0 }
        defer { eager.stop() }
        var scenario = try scenario(seed: 62, signer: "/replayed.crl")
        let authority = scenario.factory.authority
        try publishCRL(scenario, at: "/replayed.crl", [.init(authority.documentSigner, reason: 1)], thisUpdate: Self.now - 600)
        let verifier = try scenario.verifier()
        #expect(RevocationScenario.verify(try scenario.event(nil), with: verifier, service: eager).codes == [.statusRevoked])
        // From before the revocation, still before its nextUpdate.
        try publishCRL(scenario, at: "/replayed.crl", thisUpdate: Self.now - 86_400, nextUpdate: Self.now + 86_400)
        let replayed = RevocationScenario.verify(try scenario.event(nil), with: verifier, service: eager)
        #expect(replayed.codes == [.statusUndetermined] && replayed.documentStatus?.cause == "crl_time", "\(replayed.undeterminedDetail ?? "")")
        #expect(server.requests("/replayed.crl") == 2)
    }

    /// An IACA that names its own CRL: listed there, it has revoked every
    /// document it issued; and its document signer, which names no CRL, is
    /// read in that CRL too.
    @Test(arguments: [true, false])
    func theIACAsOwnCRLSpeaksForItAndForItsSigner(listingTheIACA: Bool) throws {
        let path = listingTheIACA ? "/iaca.crl" : "/iaca-only.crl"
        var scenario = try scenario(seed: listingTheIACA ? 41 : 63, signer: nil, iaca: path)
        let authority = scenario.factory.authority
        try publishCRL(scenario, at: path, [.init(listingTheIACA ? authority.iaca : authority.documentSigner, reason: 1)])
        let result = try verify(&scenario)
        #expect(result.codes == [.statusRevoked] && result.documentStatus == .revoked)
        #expect(server.requests(path) == 1, "one CRL for both certificates")
    }

    @Test func anIACAsCRLForEndEntitiesOnlySaysNothingOfTheIACA() throws {
        // An IACA CRL for end-entity certificates only says nothing of the IACA, and does not reject its documents.
        var users = try self.scenario(seed: 64, signer: nil, iaca: "/users.crl")
        try publishCRL(users, at: "/users.crl") {
            $0.extraExtensions = [(TestIssuer.Authority.issuingDistributionPointOID, true,
                                   TestIssuer.issuingDistributionPointExtension([self.server.url("/users.crl")], onlyUser: true))]
        }
        let valid = try verify(&users)
        #expect(valid.verdict == "verified" && valid.documentStatus == .valid, "\(valid.undeterminedDetail ?? "")")
    }

    /// A 304 confirms a CRL only while it still holds: past its nextUpdate
    /// it is undetermined, and the failure is remembered rather than asked
    /// again for every event.
    @Test func aNotModifiedCRLPastItsNextUpdateIsStale() throws {
        var scenario = try scenario(seed: 65, signer: "/etag.crl")
        let der = try scenario.factory.authority.revocationList(thisUpdate: Self.now - 7_200, nextUpdate: Self.now + 60)
        server.publish("/etag.crl", der, mediaType: "application/pkix-crl", etag: "\"v1\"")
        let verifier = try scenario.verifier()
        let event = try scenario.event(nil)
        let first = verifier.verify(eventJSON: event.json(), at: Self.now).resolvingStatus { service.resolve($0, at: Self.now) }
        #expect(first.documentStatus == .valid)
        let later = Self.now + 120
        for _ in 0..<3 {
            let stale = verifier.verify(eventJSON: event.json(), at: later).resolvingStatus { service.resolve($0, at: later) }
            #expect(stale.documentStatus?.cause == "crl_time", "\(stale.undeterminedDetail ?? "")")
        }
        #expect(server.requests("/etag.crl") == 2, "one conditional refetch, then the failure is remembered")
    }

    /// The cache holds lists up to a byte budget, the least recently used
    /// dropped first and fetched again when needed.
    @Test func theCacheKeepsToItsByteBudget() throws {
        var first = try scenario(seed: 66, signer: "/budget/a.crl")
        var second = try scenario(seed: 67, signer: "/budget/b.crl")
        for (scenario, path) in [(first, "/budget/a.crl"), (second, "/budget/b.crl")] {
            let entries = (0..<1_000).map { CertificateRevocationListBuilder.Entry(serialNumber: (1 << 40) + UInt64($0), reason: 1) }
            try publishCRL(scenario, at: path, entries)
        }
        // What one of them holds, read by a service with room for many.
        #expect(RevocationScenario.verify(try first.event(nil), with: try first.verifier(), service: service).documentStatus == .valid)
        let one = service.cacheBytes
        #expect(one > 1_000 * 8, "at least its serials: \(one)")
        // Room for one and a half.
        let small = RevocationScenario.service { $0.maxCacheBytes = one * 3 / 2 }
        defer { small.stop() }
        #expect(RevocationScenario.verify(try first.event(nil), with: try first.verifier(), service: small).documentStatus == .valid)
        #expect(small.cacheBytes == one)
        #expect(RevocationScenario.verify(try second.event(nil), with: try second.verifier(), service: small).documentStatus == .valid)
        #expect(small.cacheBytes <= one * 3 / 2, "the first CRL made room: \(small.cacheBytes)")
        #expect(RevocationScenario.verify(try first.event(nil), with: try first.verifier(), service: small).documentStatus == .valid)
        #expect(server.requests("/budget/a.crl") == 3, "once for each service, and again after it was dropped")
        #expect(server.requests("/budget/b.crl") == 1)
    }
}
