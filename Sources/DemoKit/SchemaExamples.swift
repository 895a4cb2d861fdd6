import Crypto
import Foundation
import MDoc
import TestIssuer
import Verification

/// The examples beside the event schemas (`Schemas/examples`) are real
/// events: request events made by the test issuer for the example tenant in
/// `tenant/` (its config, keys and IACA, committed with them), and the
/// outcome events `veridoc verify --json` makes of them. A reader of the
/// schemas can verify each one; `SchemaExamplesTests` holds them to their
/// names in `make test`, and `veridoc-dev examples --schema-examples DIR`
/// writes them again when the contract changes.
public enum SchemaExamples {
    /// A request example: its file name, what it is made of, and the reason codes it is rejected with ([] for verified).
    public struct Request: Sendable {
        public let name: String
        public let flow: Flow
        public let fault: TestIssuer.Fault?
        public let reasons: [String]
    }

    /// An outcome example: the request example it is the outcome of, and the
    /// tenant config it is verified under (`config-with-claims.json` names an
    /// outcome recipient key, so verified outcomes carry sealed claims).
    public struct Outcome: Sendable {
        public let name: String
        public let request: String
        public let config: String
    }

    public static let tenantFolder = "tenant"
    public static let configWithClaims = "config-with-claims.json"
    /// A test tenant (`testConditions`) beside the production one: the same
    /// merchant keys, its own id, the example IACA as its test root; its
    /// outcomes are `test_verified` or `test_rejected` and marked.
    public static let testConfig = "config-test.json"
    public static let testTenantID = "acme-test"
    /// The integration's key pair for sealed claims: the public half is what
    /// the tenant names; the private half lets a reader (and the test) open them.
    public static let outcomeRecipientPublicKey = "pki/integration-outcomes.pem"
    public static let outcomeRecipientPrivateKey = "pki/integration-outcomes.key.pem"

    static let appRequest = "verification-requested.apple-wallet-app.json"
    static let wrongNonceRequest = "verification-requested.apple-wallet-app.rejected-wrong-nonce.json"
    static let developerProfileRequest = "verification-requested.apple-wallet-app.test-developer-profile.json"

    public static let requests: [Request] = [
        Request(name: appRequest, flow: .appleWalletApp, fault: nil, reasons: []),
        Request(name: "verification-requested.apple-wallet-web.json", flow: .appleWalletWeb, fault: nil, reasons: []),
        Request(name: "verification-requested.iso-device-response.json", flow: .isoDeviceResponse, fault: nil, reasons: []),
        Request(name: "verification-requested.openid4vp-dc-api.json", flow: .openID4VPDCAPI, fault: nil, reasons: []),
        Request(name: wrongNonceRequest, flow: .appleWalletApp, fault: .wrongNonce, reasons: ["decryption.transcript_mismatch"]),
    ]

    /// Request examples for the test tenant: (name, the mock shape), judged under `testConfig`.
    public static let testRequests: [(name: String, shape: TestIssuer.MockShape)] = [(developerProfileRequest, .developerProfile)]

    public static let outcomes: [Outcome] = [
        Outcome(name: "verification-completed.verified.json", request: appRequest, config: "config.json"),
        Outcome(name: "verification-completed.verified-with-claims.json", request: appRequest, config: configWithClaims),
        Outcome(name: "verification-completed.rejected.json", request: wrongNonceRequest, config: "config.json"),
        Outcome(name: "verification-completed.test_verified.json", request: developerProfileRequest, config: testConfig),
    ]

    /// What the app example asks for: the retention intents an integration states per element.
    static let requestedElements = [
        RequestedElement(namespace: "org.iso.18013.5.1", element: "age_over_21", retention: .willNotStore),
        RequestedElement(namespace: "org.iso.18013.5.1", element: "family_name", retention: .mayStore(days: 30)),
        RequestedElement(namespace: "org.iso.18013.5.1", element: "portrait", retention: .mayStore(days: nil)),
    ]

    /// Writes `tenant/` (which must not exist yet) and the example files into
    /// `directory`, replacing examples of the same names, for verification at `at`.
    public static func write(to directory: URL, at: Date, seed: UInt64 = 18_013) throws {
        let at = Date(timeIntervalSince1970: at.timeIntervalSince1970.rounded(.down))
        let tenant = directory.appendingPathComponent(tenantFolder)
        guard !FileManager.default.fileExists(atPath: tenant.path) else {
            throw TestIssuer.FixtureError("\(tenant.path) exists: remove it to make new example keys")
        }
        var factory = try TestIssuer.EventFactory(now: at, seed: seed)
        let config = try factory.merchant.writeConfiguration(to: tenant, trustAnchors: [factory.authority.iaca])
        let outcomeKey = try PrivateKey.generate(curve: .p256)
        try writeFile(outcomeKey.publicKey.pem, tenant.appendingPathComponent(outcomeRecipientPublicKey), permissions: 0o644)
        try writeFile(try outcomeKey.pkcs8PEM(), tenant.appendingPathComponent(outcomeRecipientPrivateKey), permissions: 0o600)
        try writeConfig(from: config, to: tenant.appendingPathComponent(configWithClaims)) { $0["outcomeRecipientKey"] = outcomeRecipientPublicKey }
        try writeConfig(from: config, to: tenant.appendingPathComponent(testConfig)) { tenant in
            tenant["id"] = testTenantID
            tenant["testConditions"] = ["kinds": ["developerProfile"], "trustAnchors": tenant.removeValue(forKey: "trustAnchors") ?? []]
        }
        try writeFile(RFC3339.string(from: at) + "\n", tenant.appendingPathComponent("AT"), permissions: 0o644)

        var written: [String: [UInt8]] = [:]
        for request in requests {
            var options = TestIssuer.EventOptions()
            if request.flow == .appleWalletApp {
                options.requestedElements = requestedElements
                options.ageRequests = [AgeRequest(age: 21, retention: .willNotStore)]
            }
            let event = try factory.event(request.flow, options: options, fault: request.fault).json()
            written[request.name] = event
            try Data(pretty(event)).write(to: directory.appendingPathComponent(request.name))
        }
        var testFactory = factory
        let merchant = factory.merchant
        testFactory.merchant = TestIssuer.Merchant(
            tenantID: testTenantID, merchantID: merchant.merchantID, teamID: merchant.teamID, origin: merchant.origin,
            maxRequestAgeSeconds: merchant.maxRequestAgeSeconds, currentKey: merchant.key(.current), rotatedKey: merchant.key(.rotated),
            readerKey: merchant.readerKey)
        for (name, shape) in testRequests {
            var options = TestIssuer.EventOptions()
            options.mockShape = shape
            let event = try testFactory.event(.appleWalletApp, options: options).json()
            written[name] = event
            try Data(pretty(event)).write(to: directory.appendingPathComponent(name))
        }
        for outcome in outcomes {
            guard let event = written[outcome.request] else { throw TestIssuer.FixtureError("no example \(outcome.request)") }
            let json = try OutcomeEvent.verifying(event, configFile: tenant.appendingPathComponent(outcome.config), at: at)
            try Data(pretty(json)).write(to: directory.appendingPathComponent(outcome.name))
        }
    }

    /// `config` with its tenant changed by `change`, written to `destination`.
    private static func writeConfig(from config: URL, to destination: URL, _ change: (inout [String: Any]) -> Void) throws {
        guard var object = try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any],
              var tenants = object["tenants"] as? [[String: Any]], !tenants.isEmpty
        else { throw TestIssuer.FixtureError("\(config.path) has no tenant") }
        change(&tenants[0])
        object["tenants"] = tenants
        try writeFile(String(decoding: try pretty(object), as: UTF8.self), destination, permissions: 0o644)
    }

    private static func pretty(_ json: [UInt8]) throws -> Data {
        try pretty(JSONSerialization.jsonObject(with: Data(json)))
    }

    private static func pretty(_ object: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8)
    }

    private static func writeFile(_ text: String, _ url: URL, permissions: Int) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: permissions]) else {
            throw TestIssuer.FixtureError("cannot write \(url.path)")
        }
    }
}
