import CBOR
import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification
import TestSupport

/// VICAL trust lists (README §6).
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct VICALVectorTests {
    static let aamva = "vical/aamva-vical-2025-11-18.cbor"
    static let rdw = "vical/rdw-test-vical-2025-02-25.cbor"
    static let current = instant("2025-11-20T00:00:00Z")

    static func store(_ path: String) throws -> TrustStore {
        TrustStore(anchors: try certificates(path))
    }

    @Test(arguments: ["vical/aamva_dts_root_ca.pem", "vical/aamva_dts_issuing_ca.pem"])
    func aamvaIsAuthenticAndLists14IACAs(anchor: String) throws {
        let vical = try VICAL(bytes: Vectors.bytes(Self.aamva), anchors: Self.store(anchor), at: Self.current)
        #expect(vical.provider == "AAMVA")
        #expect(vical.issueID == 227602)
        #expect(vical.entries.count == 14)
        #expect(vical.date.map(RFC3339.string(from:))?.hasPrefix("2025-11-18") == true)
        #expect(vical.nextUpdate.map(RFC3339.string(from:))?.hasPrefix("2025-11-19") == true)
        #expect(vical.entries.allSatisfy { $0.docTypes == ["org.iso.18013.5.1.mDL"] })
    }

    @Test func aamvaSignerHasExpiredBy2026November() throws {
        #expect {
            try VICAL(bytes: Vectors.bytes(Self.aamva), anchors: Self.store("vical/aamva_dts_root_ca.pem"), at: instant("2026-11-29T00:00:00Z"))
        } throws: { error in
            guard case VICAL.Failure.untrusted(let detail) = error else { return false }
            return detail.contains("VICAL signer")
        }
    }

    @Test func aamvaIsUntrustedUnderAnotherAnchor() throws {
        #expect {
            try VICAL(bytes: Vectors.bytes(Self.aamva), anchors: Self.store("apple-verify-with-wallet-sample/issuer_root.pem"), at: Self.current)
        } throws: { error in
            if case VICAL.Failure.untrusted = error { return true }
            return false
        }
    }

    @Test func aamvaWithAFlippedSignatureByteIsRejected() throws {
        var bytes = try Vectors.bytes(Self.aamva)
        // The signature is the last item of the COSE_Sign1 array: the file's last byte is its last byte.
        let message = try COSESign1(CBORDecoder(limits: .init(maxItems: 1_000_000)).decode(bytes), context: "VICAL")
        #expect(bytes.suffix(message.signature.count).elementsEqual(message.signature))
        bytes[bytes.count - 1] ^= 0x01
        #expect {
            try VICAL(bytes: bytes, anchors: Self.store("vical/aamva_dts_root_ca.pem"), at: Self.current)
        } throws: { error in
            switch error as? VICAL.Failure {
            case .signatureInvalid?: true
            default: false
            }
        }
    }

    /// The RDW root is not supplied: the list is untrusted under any other
    /// anchor, though its COSE signature verifies with its own signer certificate.
    @Test func rdwTestVICALSignatureVerifiesButItsRootIsAbsent() throws {
        let bytes = try Vectors.bytes(Self.rdw)
        let at = instant("2025-03-01T00:00:00Z")
        #expect {
            try VICAL(bytes: bytes, anchors: Self.store("vical/aamva_dts_root_ca.pem"), at: at)
        } throws: { error in
            if case VICAL.Failure.untrusted = error { return true }
            return false
        }
        let message = try COSESign1(CBORDecoder(limits: .init(maxItems: 1_000_000)).decode(bytes), context: "VICAL")
        let signer = try #require(try message.x5chain(context: "VICAL").first)
        #expect(signer.subject.description.contains("RDW Vical Test Signer"))
        #expect(message.isValidSignature(algorithm: try message.algorithm(context: "VICAL"), key: try signer.publicKey()))
        let payload = try CBORDecoder(limits: .init(maxItems: 1_000_000)).decode(try #require(message.payload))
        #expect(payload["certificateInfos"]?.array?.count == 45)
    }
}

/// Configuration files (Schemas/config.schema.json), written to a temporary folder.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct ConfigurationVectorTests {
    final class Folder {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-config-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        func write(_ relativePath: String, _ text: String) throws {
            let file = url.appendingPathComponent(relativePath)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
            // Private keys must be readable by their owner only; 0600 for every file keeps that simple.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }

        /// A vector PEM placed into the temporary folder (never into the repository).
        func place(vector: String, at relativePath: String) throws {
            try write(relativePath, Vectors.text(vector))
        }

        func config(_ object: [String: Any], name: String = "config.json") throws -> URL {
            let file = url.appendingPathComponent(name)
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]).write(to: file)
            return file
        }
    }

    static let sample = "apple-verify-with-wallet-sample"

    static func appleTenant(_ overrides: [String: Any] = [:]) -> [String: Any] {
        var tenant: [String: Any] = [
            "id": "acme",
            "merchantIds": ["PassKit_Identity_Test_Merchant_ID"],
            "teamId": "PassKit_Identity_Test_Team_ID",
            "encryptionKeys": ["pki/merchant.pem", "pki/rotated.pem"],
            "trustAnchors": ["pki/anchors"],
            "origins": ["https://shop.example.com"],
            "maxRequestAgeSeconds": 300,
        ]
        for (key, value) in overrides { tenant[key] = value }
        return tenant
    }

    static func preparedFolder() throws -> Folder {
        let folder = try Folder()
        try folder.place(vector: "\(sample)/merchant_encryption_key.pem", at: "pki/merchant.pem")
        try folder.write("pki/rotated.pem", try PrivateKey.generate(curve: .p256).pkcs8PEM())
        // Apple's test root: a test tenant's (testConditions.trustAnchors), never in a production tenant's anchors.
        try folder.place(vector: "\(sample)/issuer_root.pem", at: "pki/test-roots/apple-test-root.pem")
        try folder.place(vector: "\(sample)/issuer_signing.pem", at: "pki/test-roots/apple-test-signer.pem")
        try folder.place(vector: "synthetic-pymdoccbor/iaca.pem", at: "pki/anchors/synthetic-iaca.pem")
        try folder.write("pki/anchors/README.txt", "not a certificate: skipped by extension")
        return folder
    }

    static func loadError(_ tenant: [String: Any]? = nil, root: [String: Any]? = nil, at time: Date = Date()) throws -> String {
        let folder = try preparedFolder()
        let file = try folder.config(root ?? ["tenants": [tenant ?? appleTenant()]])
        do {
            _ = try Configuration.load(from: file, at: time)
            Issue.record("configuration loaded but should not have")
            return ""
        } catch {
            #expect(!error.message.contains("BEGIN"), "a config error never quotes key material")
            return error.message
        }
    }

    /// Apple's sample is signed under Apple's test root: a test tenant (its
    /// root under testConditions.trustAnchors) loads from relative paths and
    /// verifies it, as a test.
    @Test func relativePathsAnchorFolderAndTwoKeysLoadAndVerifyTheAppleSampleInATestTenant() throws {
        let folder = try Self.preparedFolder()
        var tenant = Self.appleTenant()
        tenant["trustAnchors"] = nil
        tenant["testConditions"] = ["kinds": ["developerProfile"], "trustAnchors": ["pki/test-roots/apple-test-root.pem"]]
        let file = try folder.config(["tenants": [tenant], "kafka": ["bootstrapServers": "localhost:9092"]])
        let configuration = try Configuration.load(from: file, at: instant("2022-04-01T00:00:00Z"))
        let tenantLoaded = try #require(configuration.directory["acme"])
        #expect(tenantLoaded.keys.count == 2)
        #expect(tenantLoaded.trustStore.anchors.count == 1)
        #expect(tenantLoaded.merchantIDs == ["PassKit_Identity_Test_Merchant_ID"])
        #expect(tenantLoaded.teamID == "PassKit_Identity_Test_Team_ID")
        #expect(tenantLoaded.origins == ["https://shop.example.com"])
        #expect(tenantLoaded.maxRequestAge == 300)
        #expect(configuration.baseURL.standardizedFileURL.path == folder.url.standardizedFileURL.path)

        let parameters = try Vectors.jsonObject("\(Self.sample)/session_transcript_parameters.json")
        let time = instant("2022-04-01T00:00:00Z")
        let event = requestEvent(tenant: "acme", flow: .appleWalletApp, data: [
            "payload": base64(try Vectors.hex("\(Self.sample)/hpke_envelope.hex")),
            "nonce": base64(hex(parameters["Nonce"] as! String)),
            "merchantId": parameters["Merchant ID"] as! String,
        ], verifiedAt: time)
        let result = Verifier(directory: configuration.directory).verify(eventJSON: event, at: time)
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "test_verified")
    }

    /// A production tenant that lists Apple's test issuer, as an anchor (a
    /// file or a folder), a pinned signer, or under another file name, does
    /// not load, and the error names it.
    @Test(arguments: [
        ("trustAnchors", "pki/test-roots/apple-test-root.pem", "PassKit Identity Test Issuer Root CA"),
        ("trustAnchors", "pki/test-roots", "PassKit Identity Test Issuer Root CA"),
        ("pinnedDocumentSigners", "pki/test-roots/apple-test-signer.pem", "PassKit Identity Test Document Signing"),
    ])
    func aProductionTenantListingApplesTestIssuerIsAConfigurationError(setting: String, path: String, name: String) throws {
        let message = try Self.loadError(Self.appleTenant([setting: [path]]), at: instant("2022-04-01T00:00:00Z"))
        #expect(message.hasPrefix("tenants[0].\(setting)[0]:"), "\(message)")
        #expect(message.contains("\"\(name)\""), "\(message)")
        #expect(message.contains("testConditions.trustAnchors"), "\(message)")
    }

    /// Identified by its name too: a certificate Apple re-issues under the test root's name is one.
    @Test func aRootNamedLikeApplesTestRootIsOneToo() throws {
        let folder = try Self.preparedFolder()
        let key = try PrivateKey.generate(curve: .p256)
        var builder = CertificateBuilder(
            subject: [("CN", "PassKit Identity Test Issuer Root CA")], publicKey: key.publicKey,
            notBefore: instant("2022-01-01T00:00:00Z"), notAfter: instant("2032-01-01T00:00:00Z"))
        builder.isCA = true
        builder.keyUsage = [.keyCertSign, .cRLSign]
        let pem = "-----BEGIN CERTIFICATE-----\n" + Data(try builder.selfSigned(with: key).der).base64EncodedString(options: [.lineLength64Characters]) + "\n-----END CERTIFICATE-----\n"
        try folder.write("pki/renamed/root.pem", pem)
        var tenant = Self.appleTenant()
        tenant["trustAnchors"] = ["pki/anchors", "pki/renamed/root.pem"]
        do {
            _ = try Configuration.load(from: try folder.config(["tenants": [tenant]]), at: instant("2022-04-01T00:00:00Z"))
            Issue.record("a root named like Apple's test root must not load in production")
        } catch let error as ConfigError {
            #expect(error.message.hasPrefix("tenants[0].trustAnchors[1]:"), "\(error.message)")
        }
    }

    /// Through a VICAL too: a list that names Apple's test root makes no production anchor.
    @Test func aVICALListingApplesTestRootIsAConfigurationError() throws {
        let folder = try Self.preparedFolder()
        let time = instant("2022-04-01T00:00:00Z")
        let list = try TestIssuer.TrustList(now: time)
        let root = try certificates("\(Self.sample)/issuer_root.pem")[0]
        try Data(try list.vical([.init(root, docTypes: nil)], date: time, nextUpdate: time + 86_400)).write(to: folder.url.appendingPathComponent("pki/test.vical"))
        try folder.write("pki/vical-root.pem", TestIssuer.PEM.certificates([list.root]))
        var tenant = Self.appleTenant()
        tenant["trustAnchors"] = nil
        tenant["vicals"] = [["file": "pki/test.vical", "anchors": ["pki/vical-root.pem"]]]
        do {
            _ = try Configuration.load(from: try folder.config(["tenants": [tenant]]), at: time)
            Issue.record("a VICAL naming Apple's test root must not load in production")
        } catch let error as ConfigError {
            #expect(error.message.hasPrefix("tenants[0].vicals[0].file:"), "\(error.message)")
            #expect(error.message.contains("PassKit Identity Test Issuer Root CA"), "\(error.message)")
        }
    }

    @Test func vicalAnchorsLoadFromAbsolutePaths() throws {
        let folder = try Folder()
        let tenant: [String: Any] = [
            "id": "dmv",
            "vicals": [["file": try Vectors.url("vical/aamva-vical-2025-11-18.cbor").path, "anchors": [try Vectors.url("vical/aamva_dts_root_ca.pem").path]]],
        ]
        let file = try folder.config(["tenants": [tenant]])
        let configuration = try Configuration.load(from: file, at: instant("2025-11-19T00:00:00Z"))
        #expect(configuration.directory["dmv"]?.trustStore.anchors.count == 14)
        #expect(configuration.directory["dmv"]?.trustListDeadlines.map(\.nextUpdate) == [instant("2025-11-19T18:38:12Z")])

        // The day after, the list AAMVA published is past its nextUpdate.
        do {
            _ = try Configuration.load(from: file, at: instant("2025-11-20T00:00:00Z"))
            Issue.record("a VICAL past its nextUpdate must not load")
        } catch {
            #expect(error.message.hasPrefix("tenants[0].vicals[0].file:"), "\(error.message)")
            #expect(error.message.contains("aamva-vical-2025-11-18.cbor") && error.message.contains("2025-11-19T18:38:12Z"), "\(error.message)")
        }

        do {
            _ = try Configuration.load(from: file, at: instant("2026-11-29T00:00:00Z"))
            Issue.record("an expired VICAL signer must not load")
        } catch {
            #expect(error.message.hasPrefix("tenants[0].vicals[0].file:"), "\(error.message)")
            #expect(error.message.contains("not an authentic VICAL"), "\(error.message)")
        }
    }

    @Test func missingKeyFileIsNamed() throws {
        let message = try Self.loadError(Self.appleTenant(["encryptionKeys": ["pki/merchant.pem", "pki/absent.pem"]]))
        #expect(message.hasPrefix("tenants[0].encryptionKeys[1]:"), "\(message)")
        #expect(message.contains("absent.pem"), "\(message)")
    }

    @Test func missingAnchorIsNamed() throws {
        let message = try Self.loadError(Self.appleTenant(["trustAnchors": ["pki/no-such-folder"]]))
        #expect(message.hasPrefix("tenants[0].trustAnchors[0]:"), "\(message)")
    }

    @Test func missingConfigFileIsNamed() throws {
        let folder = try Folder()
        do {
            _ = try Configuration.load(from: folder.url.appendingPathComponent("absent.json"))
            Issue.record("a missing file must not load")
        } catch {
            #expect(error.message.contains("cannot read config file"), "\(error.message)")
        }
    }

    @Test func emptyTenantsIsNamed() throws {
        let message = try Self.loadError(root: ["tenants": [Any]()])
        #expect(message.hasPrefix("tenants:"), "\(message)")
    }

    @Test(arguments: [0, -5, 1.5, "600"] as [any Sendable])
    func badMaxRequestAgeIsNamed(value: any Sendable) throws {
        let message = try Self.loadError(Self.appleTenant(["maxRequestAgeSeconds": value]))
        #expect(message.hasPrefix("tenants[0].maxRequestAgeSeconds:"), "\(message)")
    }

    /// Day counts past what the store holds, and tenant ids past what an event may carry, are refused at load.
    @Test func retentionDaysAndTenantIdsAreBounded() throws {
        let defaults: (Int) -> [String: Any] = { days in
            ["retentionDefaults": [["namespace": "org.iso.18013.5.1", "element": "*", "retention": ["intent": "mayStore", "days": days]]]]
        }
        #expect(try Self.loadError(Self.appleTenant(["maxRetentionDays": 1_000_001])).hasPrefix("tenants[0].maxRetentionDays:"))
        #expect(try Self.loadError(Self.appleTenant(defaults(1_000_001))).hasPrefix("tenants[0].retentionDefaults[0].retention:"))
        #expect(try Self.loadError(Self.appleTenant(["id": String(repeating: "t", count: 257)])).hasPrefix("tenants[0].id:"))
        let folder = try Self.preparedFolder()
        var tenant = Self.appleTenant(["maxRetentionDays": 1_000_000, "id": String(repeating: "t", count: 256)])
        tenant.merge(defaults(1_000_000)) { $1 }
        let configuration = try Configuration.load(from: try folder.config(["tenants": [tenant]]), at: instant("2022-04-01T00:00:00Z"))
        #expect(configuration.directory[String(repeating: "t", count: 256)]?.retention.maxDays == 1_000_000)
    }

    @Test func unknownTenantSettingIsNamed() throws {
        let message = try Self.loadError(Self.appleTenant(["encryptionKey": "pki/merchant.pem"]))
        #expect(message == "tenants[0].encryptionKey: unknown setting", "\(message)")
    }

    @Test func aKeyFileWithoutAPrivateKeyIsNamedWithoutItsContents() throws {
        let message = try Self.loadError(Self.appleTenant(["encryptionKeys": ["pki/test-roots/apple-test-root.pem"]]))
        #expect(message.hasPrefix("tenants[0].encryptionKeys[0]:"), "\(message)")
    }
}
