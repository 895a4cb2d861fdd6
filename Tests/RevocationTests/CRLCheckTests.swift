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

    @Test func anIACAOnItsOwnCRLRevokesEveryDocumentItIssued() throws {
        var scenario = try scenario(seed: 41, signer: nil, iaca: "/iaca.crl")
        try publishCRL(scenario, at: "/iaca.crl", [.init(scenario.factory.authority.iaca, reason: 1)])
        let result = try verify(&scenario)
        #expect(result.codes == [.statusRevoked] && result.documentStatus == .revoked)
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
}
