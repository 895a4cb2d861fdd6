import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// Valid events verify in every flow and in every encoding verifiers must accept.
@Suite struct ValidEventTests {
    @Test("valid events verify: flow × issuer curve × tagged issuerAuth × x5chain form",
          arguments: Flow.allCases, [Curve.p256, .p384])
    func validMatrix(_ flow: Flow, _ curve: Curve) throws {
        var factory = try Fixtures.factory(curve: curve, seed: 100)
        let verifier = try factory.verifier()
        for tagged in [false, true] {
            for chain in TestIssuer.IssuanceOptions.X5ChainForm.allCases {
                var options = TestIssuer.EventOptions()
                options.taggedIssuerAuth = tagged
                options.x5chain = chain
                let event = try factory.event(flow, options: options)
                let result = Fixtures.verify(event, with: verifier)
                #expect(result.codes == [], "\(flow.rawValue) \(curve) tagged=\(tagged) \(chain): \(result.report.reasons.map(\.detail))")
                #expect(result.verdict == "verified")
                #expect(result.requestID == event.id)
                let decryption: CheckStatus = flow == .isoDeviceResponse ? .skipped : .passed
                #expect(result.report.status(of: .decryptionOpen) == decryption)
                #expect(result.report.status(of: .decryptionTranscript) == (flow == .appleWalletApp ? .passed : .skipped))
                let document = try #require(result.documents.first)
                #expect(document.docType == TestIssuer.Credential.mDLDocType)
                #expect(document.issuerCountry == "US")
                #expect(document.elements.count == factory.credential.nameSpaces.map(\.elements.count).reduce(0, +))
            }
        }
    }

    @Test("the issuerAuth layout follows the options")
    func issuerAuthLayout() throws {
        var factory = try Fixtures.factory(curve: .p384, seed: 101)
        var options = TestIssuer.EventOptions()
        options.taggedIssuerAuth = true
        options.x5chain = .documentSignerAndIACA
        let event = try factory.event(.isoDeviceResponse, options: options)
        let response = try DeviceResponse(bytes: event.deviceResponse[...])
        let issuerAuth = try #require(response.documents.first?.issuerSigned.issuerAuth)
        #expect(try issuerAuth.algorithm(context: "test") == .es384)
        #expect(try issuerAuth.x5chain(context: "test") == [factory.authority.documentSigner, factory.authority.iaca])
        let mso = try MobileSecurityObject(payload: try #require(issuerAuth.payload))
        #expect(mso.digestAlgorithm == .sha384)
        #expect(mso.valueDigests.keys.map(\.text).sorted() == [TestIssuer.Credential.mDLNameSpace, TestIssuer.Credential.aamvaNameSpace].sorted())
        let raw = try CBORDecoder().decode(event.deviceResponse)
        let tag = raw["documents"]?.array?.first?["issuerSigned"]?["issuerAuth"]?.tagged?.tag
        #expect(tag == 18)
    }

    @Test("the document signer certificate has the Annex B profile")
    func documentSignerProfile() throws {
        for curve in [Curve.p256, .p384] {
            let authority = try TestIssuer.Authority(curve: curve, now: Fixtures.now)
            #expect(DocumentSignerProfile.violations(of: authority.documentSigner) == [])
            #expect(authority.iaca.keyUsage == [.keyCertSign, .cRLSign])
            #expect(authority.iaca.basicConstraints?.isCA == true)
            #expect(authority.iaca.subject.countryName == "US")
            #expect(authority.documentSigner.basicConstraints?.isCA == false)
            #expect(try authority.documentSigner.publicKey().curve == curve)
            let trust = TrustStore(anchors: [authority.iaca])
            #expect((try? trust.validate(leaf: authority.documentSigner, intermediates: [], at: Fixtures.now).get()) != nil)
        }
    }

    @Test("iso-device-response with deviceMac and a registered reader verifies, and fails without the reader key")
    func deviceMac() throws {
        var factory = try Fixtures.factory(seed: 102)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.deviceMac = true
        var event = try factory.event(.isoDeviceResponse, options: options)
        let raw = try CBORDecoder().decode(event.deviceResponse)
        #expect(raw["documents"]?.array?.first?["deviceSigned"]?["deviceAuth"]?["deviceMac"] != nil)
        let verified = Fixtures.verify(event, with: verifier)
        #expect(verified.codes == [])
        #expect(verified.documents.first?.deviceAuthentication == .mac(reader: TestIssuer.Merchant.readerID))
        // The reader signed the key it forwarded: without it, neither the reader's signature nor the MAC holds.
        event.data["ephemeralReaderKey"] = nil
        #expect(Fixtures.verify(event, with: verifier).codes == [.readerUnauthenticated, .deviceMacUnbound])
        // Signed again without the key, the reader is authenticated and the MAC still cannot be checked.
        event.signAsReader()
        #expect(Fixtures.verify(event, with: verifier).codes == [.deviceSignatureInvalid])
    }

    @Test("the tenant's rotated key still decrypts", arguments: [Flow.appleWalletApp, .appleWalletWeb])
    func rotatedKey(_ flow: Flow) throws {
        var factory = try Fixtures.factory(seed: 103)
        let verifier = try factory.verifier()
        var options = TestIssuer.EventOptions()
        options.recipient = .rotated
        let result = Fixtures.verify(try factory.event(flow, options: options), with: verifier)
        #expect(result.codes == [])
        #expect(result.report.status(of: .decryptionOpen) == .passed)
    }

    @Test("a P-384 device key signs DeviceAuthentication with ES384")
    func p384Holder() throws {
        var factory = try Fixtures.factory(seed: 104)
        factory.holder = try TestIssuer.Holder(curve: .p384)
        let verifier = try factory.verifier()
        for flow in Flow.allCases {
            #expect(Fixtures.verify(try factory.event(flow), with: verifier).codes == [], "\(flow.rawValue)")
        }
    }

    @Test("a written config directory loads and verifies, with private key files at 0600")
    func configurationDirectory() throws {
        var factory = try Fixtures.factory(seed: 105)
        let p384 = try TestIssuer.Authority(curve: .p384, now: Fixtures.now, name: "Veridoc Test P384")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-testissuer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca, p384.iaca])
        for key in ["merchant-current.pem", "merchant-rotated.pem"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("pki/\(key)").path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
        let configuration = try Configuration.load(from: file, at: Fixtures.now)
        let verifier = Verifier(directory: configuration.directory)
        var options = TestIssuer.EventOptions()
        options.recipient = .rotated
        #expect(Fixtures.verify(try factory.event(.appleWalletApp, options: options), with: verifier).codes == [])
        factory.authority = p384
        #expect(Fixtures.verify(try factory.event(.appleWalletWeb), with: verifier).codes == [])
    }

    @Test("the same seed gives the same element values, salts and ids")
    func reproducible() throws {
        var first = TestIssuer.SeededRandom(seed: 42)
        var second = TestIssuer.SeededRandom(seed: 42)
        let a = TestIssuer.Credential.mobileDrivingLicence(now: Fixtures.now, using: &first)
        let b = TestIssuer.Credential.mobileDrivingLicence(now: Fixtures.now, using: &second)
        let encode = { (credential: TestIssuer.Credential) in
            credential.nameSpaces.flatMap { $0.elements.map { CBOR.array([.text($0.identifier), $0.value]).encoded() } }
        }
        #expect(encode(a) == encode(b))
        #expect(first.uuidString() == second.uuidString())
        var third = TestIssuer.SeededRandom(seed: 43)
        #expect(encode(TestIssuer.Credential.mobileDrivingLicence(now: Fixtures.now, using: &third)) != encode(a))

        let authority = try TestIssuer.Authority(now: Fixtures.now)
        let device = try TestIssuer.Holder()
        var left = TestIssuer.SeededRandom(seed: 9)
        var right = TestIssuer.SeededRandom(seed: 9)
        let options = TestIssuer.IssuanceOptions(now: Fixtures.now)
        let one = try authority.issue(a, deviceKey: device.deviceKey.publicKey, options: options, using: &left)
        let two = try authority.issue(a, deviceKey: device.deviceKey.publicKey, options: options, using: &right)
        #expect(one.nameSpaces.flatMap { $0.items.map(\.taggedBytes) } == two.nameSpaces.flatMap { $0.items.map(\.taggedBytes) })
        let salts = one.nameSpaces.flatMap { $0.items.map(\.random.count) }
        #expect(salts.allSatisfy { (16...32).contains($0) })
    }

    @Test("the mDL carries full-dates, a few-KB portrait and both namespaces")
    func credentialShape() throws {
        var random = TestIssuer.SeededRandom(seed: 5)
        let mdl = TestIssuer.Credential.mobileDrivingLicence(now: Fixtures.now, using: &random)
        let space = TestIssuer.Credential.mDLNameSpace
        guard case .tagged(1004, .text(let birth))? = mdl[space, "birth_date"] else { Issue.record("birth_date is not a full-date"); return }
        #expect(RFC3339.fullDate(from: birth) != nil)
        guard case .bytes(let portrait)? = mdl[space, "portrait"] else { Issue.record("no portrait"); return }
        #expect(portrait.count == 3_000 && portrait.starts(with: [0xFF, 0xD8]))
        #expect(mdl[space, "age_over_21"] == true)
        #expect(mdl[TestIssuer.Credential.aamvaNameSpace, "DHS_compliance"] == "F")
    }
}
