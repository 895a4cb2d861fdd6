import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import TestSupport
import Verification

/// Apple's test conditions against Apple's own sample (README §8 of the
/// vectors): the Simulator's transcript parameters name the sample's test
/// merchant key, a test tenant configured from those files accepts a
/// Simulator-shaped response sealed to it, and Apple's fully signed sample
/// is a test verdict there, never a production one.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found (set VERIDOC_VECTORS or place shared/vectors next to the package)"))
struct AppleTestConditionsVectorTests {
    static let sample = ConfigurationVectorTests.sample
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func simulatorParameters() throws -> [String: Any] {
        try Vectors.jsonObject("\(sample)/simulator/session_transcript_parameters.json")
    }

    @Test func theSimulatorsParametersNameApplesTestKeyAndTeam() throws {
        let parameters = try Self.simulatorParameters()
        let keyHash = hex(try #require(parameters["Encryption Key Hash"] as? String))
        #expect(parameters["Team ID"] as? String == TestKind.simulatorTeamID)
        #expect(sha256(try Vectors.hex("\(Self.sample)/merchant_encryption_uncompressed_public_key.hex")) == keyHash)
        let key = try PrivateKey(pem: Vectors.text("\(Self.sample)/merchant_encryption_key.pem"))
        #expect(try TenantKey(key).keyHash == keyHash)
    }

    /// The test tenant an operator writes from Apple's sample: the Simulator's
    /// key and team ID, Apple's test issuer root as its only trust.
    static func testTenantConfiguration(merchantID: String) throws -> (ConfigurationVectorTests.Folder, Configuration) {
        let folder = try ConfigurationVectorTests.Folder()
        try folder.place(vector: "\(sample)/merchant_encryption_key.pem", at: "pki/apple-simulator-key.pem")
        try folder.place(vector: "\(sample)/issuer_root.pem", at: "pki/apple-test-issuer-root.pem")
        let file = try folder.config(["tenants": [[
            "id": "acme-test", "merchantIds": [merchantID], "teamId": TestKind.simulatorTeamID,
            "encryptionKeys": ["pki/apple-simulator-key.pem"],
            "testConditions": ["kinds": ["simulator", "developerProfile"], "trustAnchors": ["pki/apple-test-issuer-root.pem"]],
        ]]])
        return (folder, try Configuration.load(from: file, at: now))
    }

    @Test func aSimulatorResponseSealedToApplesTestKeyIsATestVerdict() throws {
        let appMerchant = "merchant.com.example.app"
        let (folder, configuration) = try Self.testTenantConfiguration(merchantID: appMerchant)
        _ = folder
        let appleKey = try PrivateKey(pem: Vectors.text("\(Self.sample)/merchant_encryption_key.pem"))
        var factory = try TestIssuer.EventFactory(now: Self.now, seed: 2830)
        factory.merchant = TestIssuer.Merchant(
            tenantID: "acme-test", merchantID: appMerchant, teamID: TestKind.simulatorTeamID, origin: "https://shop.example.com",
            maxRequestAgeSeconds: 600, currentKey: appleKey, rotatedKey: try PrivateKey.generate(curve: .p256))
        var options = TestIssuer.EventOptions()
        options.mockShape = .simulator
        let event = try factory.event(.appleWalletApp, options: options)
        // Sealed as the Simulator seals: to Apple's key hash, with Apple's test team ID, the app's nonce and merchant ID.
        let parameters = try Self.simulatorParameters()
        let nonceText = try #require(event.data["nonce"])
        let nonce = Array(try #require(Data(base64Encoded: nonceText)))
        #expect(event.transcript.encoded == SessionTranscript.appleWalletApp(
            nonce: nonce, merchantID: appMerchant, teamID: try #require(parameters["Team ID"] as? String),
            recipientKeyHash: hex(try #require(parameters["Encryption Key Hash"] as? String))).encoded)

        let result = Verifier(directory: configuration.directory).verify(eventJSON: event.json(), at: Self.now)
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "test_verified" && result.assurance == .test(kind: .simulator))
    }

    /// Apple's sample has real signatures under Apple's test root: in a test
    /// tenant it is a developer-profile-shaped test verdict.
    @Test func applesSignedSampleIsATestVerdictInATestTenant() throws {
        let parameters = try Vectors.jsonObject("\(Self.sample)/session_transcript_parameters.json")
        let (folder, configuration) = try Self.testTenantConfiguration(merchantID: try #require(parameters["Merchant ID"] as? String))
        _ = folder
        let time = instant("2022-04-01T00:00:00Z")
        let event = requestEvent(tenant: "acme-test", flow: .appleWalletApp, data: [
            "payload": base64(try Vectors.hex("\(Self.sample)/hpke_envelope.hex")),
            "nonce": base64(hex(try #require(parameters["Nonce"] as? String))),
            "merchantId": try #require(parameters["Merchant ID"] as? String),
        ], verifiedAt: time)
        let result = Verifier(directory: configuration.directory).verify(eventJSON: event, at: time)
        #expect(result.codes == [], "\(result.summary)")
        #expect(result.verdict == "test_verified" && result.assurance == .test(kind: .developerProfile) && !result.isVerified)
    }
}
