import Foundation
import Crypto
import MDoc
import Testing
import TestIssuer
import TestSupport

/// `veridoc verify` on events from the test issuer: a production issuer
/// verifies; a document signer of another country than its IACA, and an IACA
/// a VICAL lists for another docType, are rejected with their own codes.
@Suite struct TrustListVerifyCommandTests {
    /// 2025-06-15T14:13:20Z.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static var at: String { RFC3339.string(from: now) }

    /// A config folder for the factory's merchant trusting `anchors`, and an
    /// iso-device-response event of `factory` in it.
    static func folder(_ factory: inout TestIssuer.EventFactory, trusting anchors: [Certificate]) throws -> (directory: URL, config: URL, event: URL) {
        let directory = try CLI.temporaryDirectory()
        let config = try factory.merchant.writeConfiguration(to: directory, trustAnchors: anchors)
        let event = directory.appendingPathComponent("event.json")
        try Data(try factory.event(.isoDeviceResponse).json()).write(to: event)
        return (directory, config, event)
    }

    /// A trust list whose root signs the VICALs the tenant reads (pki/vical-root.pem).
    static func trustList(in directory: URL) throws -> TestIssuer.TrustList {
        let list = try TestIssuer.TrustList(now: now)
        try TestIssuer.PEM.certificates([list.root]).write(to: directory.appendingPathComponent("pki/vical-root.pem"), atomically: true, encoding: .utf8)
        return list
    }

    /// Writes `vical` as pki/issuers.vical and has the tenant read it, without
    /// its own trust anchors when `withoutTrustAnchors`.
    static func readVICAL(_ vical: [UInt8], _ files: (directory: URL, config: URL, event: URL), withoutTrustAnchors: Bool) throws {
        try Data(vical).write(to: files.directory.appendingPathComponent("pki/issuers.vical"))
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: files.config)) as? [String: Any])
        var tenants = try #require(config["tenants"] as? [[String: Any]])
        if withoutTrustAnchors { tenants[0]["trustAnchors"] = nil }
        tenants[0]["vicals"] = [["file": "pki/issuers.vical", "anchors": ["pki/vical-root.pem"]]]
        config["tenants"] = tenants
        try JSONSerialization.data(withJSONObject: config).write(to: files.config)
    }

    static func outcome(_ run: CLI.Run) throws -> (verdict: String?, codes: [String]) {
        let outcome = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)\(run.stderr)")
        let data = try #require(outcome["data"] as? [String: Any])
        return (data["verdict"] as? String, (data["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? [])
    }

    @Test func aProductionIssuerVerifiesWithExitZero() throws {
        var factory = try TestIssuer.EventFactory(now: Self.now, seed: 5)
        let files = try Self.folder(&factory, trusting: [factory.authority.iaca])
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let run = try CLI.run(["verify", "--config", files.config.path, "--at", Self.at, files.event.path])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("Verdict: VERIFIED"))
        #expect(run.stdout.contains("✓ issuer.authority"))
        #expect(run.stdout.contains("✓ device.authentication"))
        #expect(run.stdout.contains("– request.nonce (skipped)"))
        #expect(run.stdout.contains("family_name"), "element names are listed")
    }

    /// The defect: a C=FR document signer under a C=US IACA verified, and the
    /// outcome said the issuer was French.
    @Test func aFrenchSignerUnderAUSIACAIsRejected() throws {
        let us = try TestIssuer.Authority(now: Self.now)
        let french = try us.reissuingDocumentSigner(country: "FR", state: us.state, now: Self.now)
        var random = TestIssuer.SeededRandom(seed: 6)
        var factory = TestIssuer.EventFactory(
            authority: french, merchant: try TestIssuer.Merchant(), holder: try TestIssuer.Holder(),
            credential: .mobileDrivingLicence(now: Self.now, using: &random), now: Self.now, seed: 6)
        let files = try Self.folder(&factory, trusting: [us.iaca])
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let run = try CLI.run(["verify", "--config", files.config.path, "--at", Self.at, "--json", files.event.path])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let outcome = try Self.outcome(run)
        #expect(outcome.verdict == "rejected")
        #expect(outcome.codes == ["issuer.signer_country_mismatch", "issuer.issuing_country_mismatch"])
    }

    /// The defect: a VICAL entry scoped to mDL made its IACA trusted for every docType.
    @Test func anIACAAVICALListsForAnotherDocTypeIsRejected() throws {
        var factory = try TestIssuer.EventFactory(now: Self.now, seed: 8)
        let files = try Self.folder(&factory, trusting: [factory.authority.iaca])
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let list = try Self.trustList(in: files.directory)

        func verify(listing docTypes: [String]) throws -> (CLI.Run, (verdict: String?, codes: [String])) {
            let vical = try list.vical([.init(factory.authority.iaca, docTypes: docTypes)], date: Self.now - 3_600, nextUpdate: Self.now + 86_400)
            // The same tenant, its IACA now known only from the VICAL.
            try Self.readVICAL(vical, files, withoutTrustAnchors: true)
            let run = try CLI.run(["verify", "--config", files.config.path, "--at", Self.at, "--json", files.event.path])
            return (run, try Self.outcome(run))
        }

        let (photoRun, photo) = try verify(listing: ["org.iso.23220.photoid.1"])
        #expect(photoRun.status == 1, "\(photoRun.stdout)\(photoRun.stderr)")
        #expect(photo.verdict == "rejected")
        #expect(photo.codes == ["issuer.doctype_not_authorized"])

        let (mdlRun, mdl) = try verify(listing: [TestIssuer.Credential.mDLDocType])
        #expect(mdlRun.status == 0, "\(mdlRun.stdout)\(mdlRun.stderr)")
        #expect(mdl.verdict == "verified" && mdl.codes.isEmpty)
    }

    /// A VICAL past its nextUpdate: the config does not load (exit 2), naming the file and the date.
    @Test func aStaleVICALIsAConfigErrorWithExitTwo() throws {
        var factory = try TestIssuer.EventFactory(now: Self.now, seed: 9)
        let files = try Self.folder(&factory, trusting: [factory.authority.iaca])
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let list = try Self.trustList(in: files.directory)
        let nextUpdate = Self.now - 400 * 86_400
        let vical = try list.vical([.init(factory.authority.iaca, docTypes: nil)], date: nextUpdate - 86_400, nextUpdate: nextUpdate)
        try Self.readVICAL(vical, files, withoutTrustAnchors: false)
        let run = try CLI.run(["verify", "--config", files.config.path, "--at", Self.at, files.event.path])
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("issuers.vical") && run.stderr.contains(RFC3339.string(from: nextUpdate)), "\(run.stderr)")
    }
}
