import CBOR
import Crypto
import Foundation
import MDoc
import Settings
import Testing
import TestIssuer
import Verification

/// VICALs as ISO 18013-5 writes them: `certificateInfos[].docType` limits
/// what an IACA may vouch for, and a list past its `nextUpdate` is refused at
/// start and stops vouching while running. Tenants come from config files
/// written to a temporary folder, as `veridoc run` and `veridoc verify` read them.
@Suite struct VICALScopeTests {
    /// 2025-06-15T14:13:20Z.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let mDL = TestIssuer.Credential.mDLDocType
    static let photoID = "org.iso.23220.photoid.1"

    /// A temporary config folder with a VICAL publisher.
    final class Folder {
        let url: URL
        let list: TestIssuer.TrustList

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-vical-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            list = try TestIssuer.TrustList(now: VICALScopeTests.now)
            try write("pki/vical-root.pem", Array(TestIssuer.PEM.certificates([list.root]).utf8))
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        func write(_ relativePath: String, _ bytes: [UInt8]) throws {
            let file = url.appendingPathComponent(relativePath)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: file)
        }

        /// A VICAL file listing `entries`, and the `vicals` entry naming it.
        func vical(_ name: String, _ entries: [TestIssuer.TrustList.Entry], nextUpdate: Date?, graceSeconds: Int? = nil) throws -> [String: Any] {
            try write("pki/\(name)", try list.vical(entries, date: VICALScopeTests.now - 86_400, nextUpdate: nextUpdate))
            var entry: [String: Any] = ["file": "pki/\(name)", "anchors": ["pki/vical-root.pem"]]
            if let graceSeconds { entry["graceSeconds"] = graceSeconds }
            return entry
        }

        func config(_ tenant: [String: Any]) throws -> URL {
            let file = url.appendingPathComponent("config.json")
            try JSONSerialization.data(withJSONObject: ["tenants": [tenant]], options: [.sortedKeys]).write(to: file)
            return file
        }

        func load(_ tenant: [String: Any], at time: Date = VICALScopeTests.now) throws -> Configuration {
            try Configuration.load(from: try config(tenant), at: time)
        }

        func loadError(_ tenant: [String: Any], at time: Date = VICALScopeTests.now) throws -> String {
            do {
                _ = try load(tenant, at: time)
                Issue.record("the configuration loaded but should not have")
                return ""
            } catch let error as ConfigError {
                return error.message
            }
        }
    }

    static func factory(seed: UInt64 = 7) throws -> TestIssuer.EventFactory {
        try TestIssuer.EventFactory(now: now, seed: seed)
    }

    static func verify(_ factory: inout TestIssuer.EventFactory, _ configuration: Configuration, at time: Date = now) throws -> VerificationResult {
        let event = try factory.event(.isoDeviceResponse)
        return Verifier(directory: configuration.directory).verify(eventJSON: event.json(), at: time)
    }

    @Test func anIACAListedForAnotherDocTypeDoesNotVouchForAnMDL() throws {
        let folder = try Folder()
        var factory = try Self.factory()
        let vical = try folder.vical("photo.vical", [.init(factory.authority.iaca, docTypes: [Self.photoID])], nextUpdate: Self.now + 86_400)
        let result = try Self.verify(&factory, try folder.load(["id": "acme", "vicals": [vical]]))
        #expect(result.codes == [.issuerDoctypeNotAuthorized], "\(result.report.reasons.map(\.detail))")
        #expect(result.report.status(of: .issuerChain) == .passed)
        let detail = try #require(result.report.reasons.first?.detail)
        #expect(detail.contains(Self.mDL) && detail.contains("photo.vical"), "\(detail)")
    }

    @Test func anIACAListedForTheDocTypeOrForEveryDocTypeVouchesForIt() throws {
        let folder = try Folder()
        var factory = try Self.factory()
        let iaca = factory.authority.iaca
        for (name, docTypes) in [("mdl.vical", [Self.photoID, Self.mDL]), ("any.vical", nil)] as [(String, [String]?)] {
            let vical = try folder.vical(name, [.init(iaca, docTypes: docTypes)], nextUpdate: Self.now + 86_400)
            let result = try Self.verify(&factory, try folder.load(["id": "acme", "vicals": [vical]]))
            #expect(result.codes == [], "\(name): \(result.report.reasons.map(\.detail))")
            #expect(result.report.status(of: .issuerAuthority) == .passed)
        }
    }

    /// Listed directly, the IACA vouches for everything, whatever a VICAL beside says;
    /// two VICALs naming one IACA add up.
    @Test func trustAnchorsAndSecondListsWiden() throws {
        let folder = try Folder()
        var factory = try Self.factory()
        let iaca = factory.authority.iaca
        try folder.write("pki/iaca.pem", Array(TestIssuer.PEM.certificates([iaca]).utf8))
        let photo = try folder.vical("photo.vical", [.init(iaca, docTypes: [Self.photoID])], nextUpdate: Self.now + 86_400)
        let direct = try Self.verify(&factory, try folder.load(["id": "acme", "vicals": [photo], "trustAnchors": ["pki/iaca.pem"]]))
        #expect(direct.codes == [], "\(direct.report.reasons.map(\.detail))")
        let mdl = try folder.vical("mdl.vical", [.init(iaca, docTypes: [Self.mDL])], nextUpdate: Self.now + 86_400)
        let both = try Self.verify(&factory, try folder.load(["id": "acme", "vicals": [photo, mdl]]))
        #expect(both.codes == [], "\(both.report.reasons.map(\.detail))")
    }

    @Test func aStaleVICALIsAConfigurationErrorNamingTheFileAndTheDate() throws {
        let folder = try Folder()
        let factory = try Self.factory()
        let nextUpdate = Self.now - 400 * 86_400
        let vical = try folder.vical("aged.vical", [.init(factory.authority.iaca, docTypes: nil)], nextUpdate: nextUpdate)
        let message = try folder.loadError(["id": "acme", "vicals": [vical]])
        #expect(message.hasPrefix("tenants[0].vicals[0].file:"), "\(message)")
        #expect(message.contains(folder.url.appendingPathComponent("pki/aged.vical").path), "\(message)")
        #expect(message.contains(RFC3339.string(from: nextUpdate)), "\(message)")
        #expect(message.contains("stale"), "\(message)")
    }

    /// The grace is bounded: within it the list loads; past the cap the setting is refused.
    @Test func graceSecondsAreBounded() throws {
        let folder = try Folder()
        var factory = try Self.factory()
        let iaca = factory.authority.iaca
        let week = TenantSettings.VICAL.maxGraceSeconds
        let late = try folder.vical("late.vical", [.init(iaca, docTypes: nil)], nextUpdate: Self.now - 86_400, graceSeconds: week)
        let configuration = try folder.load(["id": "acme", "vicals": [late]])
        #expect(try Self.verify(&factory, configuration).codes == [])
        let deadline = try #require(configuration.directory["acme"]?.trustListDeadlines.first)
        #expect(deadline.staleAfter == Self.now - 86_400 + TimeInterval(week))

        let tooLong = try folder.vical("late.vical", [.init(iaca, docTypes: nil)], nextUpdate: Self.now - 86_400, graceSeconds: week + 1)
        #expect(try folder.loadError(["id": "acme", "vicals": [tooLong]]).hasPrefix("tenants[0].vicals[0].graceSeconds:"))
        let pastGrace = try folder.vical("late.vical", [.init(iaca, docTypes: nil)], nextUpdate: Self.now - 8 * 86_400, graceSeconds: week)
        #expect(try folder.loadError(["id": "acme", "vicals": [pastGrace]]).contains("plus graceSeconds \(week)"))
    }

    /// Loaded while fresh, the list stops vouching once its nextUpdate has
    /// passed: the running verifier rejects its documents as untrusted.
    @Test func aVICALGoingStaleWhileRunningStopsVouching() throws {
        let folder = try Folder()
        var factory = try Self.factory()
        let vical = try folder.vical("daily.vical", [.init(factory.authority.iaca, docTypes: [Self.mDL])], nextUpdate: Self.now + 3_600)
        let configuration = try folder.load(["id": "acme", "vicals": [vical]])
        #expect(try Self.verify(&factory, configuration).codes == [])

        let later = Self.now + 7_200
        factory.now = later
        let stale = try Self.verify(&factory, configuration, at: later)
        #expect(stale.codes == [.issuerUntrusted], "\(stale.report.reasons.map(\.detail))")
        #expect(stale.report.reasons.first?.detail.contains("daily.vical") == true)
        #expect(stale.report.status(of: .issuerAuthority) == .skipped)
    }

    /// A VICAL without nextUpdate (the member is optional) never goes stale;
    /// one whose nextUpdate is no date is refused, not read as "never".
    @Test func nextUpdateAbsentOrUnreadable() throws {
        let folder = try Folder()
        let factory = try Self.factory()
        let open = try folder.vical("open.vical", [.init(factory.authority.iaca, docTypes: nil)], nextUpdate: nil)
        #expect(try folder.load(["id": "acme", "vicals": [open]]).directory["acme"]?.trustListDeadlines.isEmpty == true)

        let payload: CBOR = [
            "version": "1.0", "vicalProvider": "x", "date": .tagged(0, .text(RFC3339.string(from: Self.now))), "vicalIssueID": 1,
            "nextUpdate": 20_251_119, "certificateInfos": [["certificate": .bytes(factory.authority.iaca.der)]],
        ]
        let message = try COSESign1.sign(
            payload: payload.encoded(), key: folder.list.signerKey, algorithm: .es256, unprotected: [CBOR.MapEntry(33, .bytes(folder.list.signer.der))])
        try folder.write("pki/odd.vical", message.encoded())
        let error = try folder.loadError(["id": "acme", "vicals": [["file": "pki/odd.vical", "anchors": ["pki/vical-root.pem"]]]])
        #expect(error.contains("nextUpdate is not a date-time"), "\(error)")
    }

    /// A docType list that is there but empty or holds a non-text item is
    /// refused: read as "no restriction" it would widen the entry.
    @Test(arguments: [CBOR.array([]), CBOR.array(["org.iso.18013.5.1.mDL", 5]), CBOR.text("org.iso.18013.5.1.mDL")])
    func anOddDocTypeListIsRefusedNotWidened(items: CBOR) throws {
        let folder = try Folder()
        let factory = try Self.factory()
        var entry = TestIssuer.TrustList.Entry(factory.authority.iaca, docTypes: nil)
        entry.docTypeItems = items
        let vical = try folder.vical("odd.vical", [entry], nextUpdate: Self.now + 86_400)
        let message = try folder.loadError(["id": "acme", "vicals": [vical]])
        #expect(message.contains("certificateInfos[0].docType"), "\(message)")
    }
}

/// ISO 18013-5 Annex B and the mDL element definitions: the document signer
/// is of its IACA's country (and state, where the IACA names one), and the
/// disclosed issuing_country / issuing_jurisdiction are the signer's.
@Suite struct JurisdictionTests {
    static let now = VICALScopeTests.now

    static func factory(authority: TestIssuer.Authority, edit: (inout TestIssuer.Credential) -> Void = { _ in }, seed: UInt64 = 11) throws -> TestIssuer.EventFactory {
        var random = TestIssuer.SeededRandom(seed: seed)
        var credential = TestIssuer.Credential.mobileDrivingLicence(now: now, using: &random)
        edit(&credential)
        return TestIssuer.EventFactory(
            authority: authority, merchant: try TestIssuer.Merchant(), holder: try TestIssuer.Holder(), credential: credential, now: now, seed: seed)
    }

    /// The factory's tenant trusts `iaca` directly (its IACA by default).
    static func verify(_ factory: inout TestIssuer.EventFactory, trusting iaca: Certificate? = nil) throws -> VerificationResult {
        let event = try factory.event(.isoDeviceResponse)
        return try factory.merchant.verifier(trusting: [iaca ?? factory.authority.iaca]).verify(eventJSON: event.json(), at: now)
    }

    @Test func aFrenchSignerUnderAUSIACAIsRejectedTwice() throws {
        let us = try TestIssuer.Authority(now: Self.now)
        var factory = try Self.factory(authority: try us.reissuingDocumentSigner(country: "FR", state: us.state, now: Self.now))
        let result = try Self.verify(&factory)
        #expect(result.codes == [.issuerSignerCountryMismatch, .issuerIssuingCountryMismatch], "\(result.report.reasons.map(\.detail))")
        #expect(result.verdict == "rejected")
        #expect(result.report.status(of: .issuerChain) == .passed)
        #expect(result.report.status(of: .issuerAuthority) == .failed)
        // The details name the certificates' countries, never the element's value.
        let details = result.report.reasons.map(\.detail).joined(separator: " | ")
        #expect(details.contains("\"FR\"") && details.contains("\"US\""), "\(details)")
    }

    @Test func issuingCountryMustBeTheSignersWhenDisclosed() throws {
        let authority = try TestIssuer.Authority(now: Self.now)
        var other = try Self.factory(authority: authority) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_country"] = "FR" }
        #expect(try Self.verify(&other).codes == [.issuerIssuingCountryMismatch])
        // A number is not a country: mismatched, and of the wrong type.
        var notText = try Self.factory(authority: authority) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_country"] = 840 }
        #expect(try Self.verify(&notText).codes == [.issuerIssuingCountryMismatch, .msoElementTypeMismatch])
        // The ISO/IEC 23220 namespaces carry issuing_country too.
        var photo = try Self.factory(authority: authority) { $0["org.iso.23220.1", "issuing_country"] = "FR" }
        #expect(try Self.verify(&photo).codes == [.issuerIssuingCountryMismatch])
        // Not disclosed: nothing to compare.
        var withheld = try Self.factory(authority: authority) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_country"] = nil }
        let result = try Self.verify(&withheld)
        #expect(result.codes == [] && result.report.status(of: .issuerAuthority) == .passed)
    }

    /// Only a value whose digest the issuer signed is compared: an
    /// issuing_country altered after signing is the digest check's, whichever
    /// way it was altered.
    @Test func onlyTheDigestVerifiedValueCounts() throws {
        let authority = try TestIssuer.Authority(now: Self.now)
        for (signed, altered) in [("US", "FR"), ("FR", "US")] {
            var factory = try Self.factory(authority: authority) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_country"] = .text(signed) }
            var random = TestIssuer.SeededRandom(seed: 3)
            let issued = try authority.issue(
                factory.credential, deviceKey: factory.holder.deviceKey.publicKey, options: TestIssuer.IssuanceOptions(now: Self.now), using: &random)
            let tampered = try issued.replacingValue(namespace: TestIssuer.Credential.mDLNameSpace, identifier: "issuing_country", with: .text(altered))
            let reader = try TestIssuer.ReaderSession()
            let document = try factory.holder.present(tampered, transcript: reader.transcript, authentication: .signature)
            let response = TestIssuer.deviceResponse(documents: [document])
            let event = try JSONSerialization.data(withJSONObject: [
                "specversion": "1.0", "id": "altered-country", "source": "urn:test", "type": VerificationRequest.eventType,
                "time": RFC3339.string(from: Self.now - 5), "datacontenttype": "application/json",
                "data": ["tenant": factory.merchant.tenantID, "flow": "iso-device-response", "payload": Data(response).base64EncodedString(),
                         "sessionTranscript": Data(reader.transcriptBytes).base64EncodedString()],
            ])
            let result = try factory.merchant.verifier(trusting: [authority.iaca]).verify(eventJSON: Array(event), at: Self.now)
            #expect(result.codes == [.msoDigestMismatch], "signed \(signed), altered to \(altered): \(result.report.reasons.map(\.detail))")
            #expect(result.report.status(of: .issuerAuthority) == .passed)
            factory.now = Self.now
        }
    }

    /// AAMVA's form: IACA and signer say ST=US-CA; issuing_jurisdiction must say the same.
    @Test func issuingJurisdictionIsTheSignersState() throws {
        let authority = try TestIssuer.Authority(now: Self.now, state: "US-CA")
        var same = try Self.factory(authority: authority) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_jurisdiction"] = "US-CA" }
        #expect(try Self.verify(&same).codes == [])
        var other = try Self.factory(authority: authority) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_jurisdiction"] = "US-NV" }
        let result = try Self.verify(&other)
        #expect(result.codes == [.issuerIssuingJurisdictionMismatch], "\(result.report.reasons.map(\.detail))")
        // A signer without a state: an ISO 3166-2 code must still be of the signer's country.
        let stateless = try authority.reissuingDocumentSigner(country: "US", state: nil, now: Self.now)
        var foreign = try Self.factory(authority: stateless) { $0[TestIssuer.Credential.mDLNameSpace, "issuing_jurisdiction"] = "FR-75" }
        // The IACA names a state the signer lacks: that is the signer-and-IACA rule's finding too.
        #expect(try Self.verify(&foreign, trusting: authority.iaca).codes == [.issuerSignerCountryMismatch, .issuerIssuingJurisdictionMismatch])
    }

    @Test func aSignerOfAnotherStateThanItsIACAIsRejected() throws {
        let authority = try TestIssuer.Authority(now: Self.now, state: "US-CA")
        var factory = try Self.factory(authority: try authority.reissuingDocumentSigner(country: "US", state: "US-NV", now: Self.now))
        #expect(try Self.verify(&factory).codes == [.issuerSignerCountryMismatch])
        // An IACA without a state leaves the signer's state free.
        let stateless = try TestIssuer.Authority(now: Self.now)
        let root = try Self.rootWithoutState(like: stateless)
        var free = try Self.factory(authority: root)
        #expect(try Self.verify(&free).codes == [])
    }

    /// An authority whose IACA names a country but no state, with a signer naming a state.
    static func rootWithoutState(like authority: TestIssuer.Authority) throws -> TestIssuer.Authority {
        let key = try PrivateKey.generate(curve: .p256)
        var root = CertificateBuilder(subject: [("C", "US"), ("CN", "Stateless IACA")], publicKey: key.publicKey, notBefore: now - 86_400 * 365, notAfter: now + 86_400 * 365)
        root.isCA = true
        root.keyUsage = [.keyCertSign, .cRLSign]
        let iaca = try root.selfSigned(with: key)
        let signerKey = try PrivateKey.generate(curve: .p256)
        var signer = CertificateBuilder(subject: [("C", "US"), ("ST", "US-CA"), ("CN", "Stateless DS")], publicKey: signerKey.publicKey, notBefore: now - 86_400, notAfter: now + 86_400 * 30)
        signer.isCA = false
        signer.keyUsage = .digitalSignature
        signer.extendedKeyUsage = [DocumentSignerProfile.extendedKeyUsage]
        let documentSigner = try signer.signed(by: iaca, issuerKey: key)
        return TestIssuer.Authority(curve: .p256, name: "Stateless", state: "US-CA", iacaKey: key, iaca: iaca, documentSignerKey: signerKey, documentSigner: documentSigner)
    }
}
