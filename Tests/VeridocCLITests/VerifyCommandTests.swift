import Foundation
import Testing
import TestSupport

/// `veridoc verify` as a user runs it, against Apple's published sample.
@Suite(.enabled(if: CLI.vectors != nil, "shared/vectors not found: these tests verify Apple's sample"))
struct VerifyCommandTests {
    struct Sample {
        let directory: URL
        var config: String { directory.appendingPathComponent("config.json").path }
        var event: String { directory.appendingPathComponent("event.json").path }
    }

    /// A config and an event for Apple's sample, written to a fresh folder.
    func sample(eventTime: String, testTenant: Bool = false) throws -> Sample {
        let vectors = try #require(CLI.vectors).appendingPathComponent("apple-verify-with-wallet-sample")
        let directory = try CLI.temporaryDirectory()
        // The vector key is world-readable; the verifier accepts private keys only their owner can read.
        let key = directory.appendingPathComponent("merchant_encryption_key.pem")
        _ = FileManager.default.createFile(atPath: key.path, contents: try Data(contentsOf: vectors.appendingPathComponent("merchant_encryption_key.pem")),
                                           attributes: [.posixPermissions: 0o600])
        var tenant: [String: Any] = [
            "id": "apple-sample", "merchantIds": ["PassKit_Identity_Test_Merchant_ID"], "teamId": "PassKit_Identity_Test_Team_ID",
            "encryptionKeys": [key.path],
        ]
        let root = vectors.appendingPathComponent("issuer_root.pem").path
        if testTenant {
            tenant["testConditions"] = ["kinds": ["simulator", "developerProfile"], "trustAnchors": [root]]
        } else {
            tenant["trustAnchors"] = [root]
        }
        let config: [String: Any] = ["tenants": [tenant]]
        try JSONSerialization.data(withJSONObject: config).write(to: directory.appendingPathComponent("config.json"))
        let envelope = try hexFile(vectors.appendingPathComponent("hpke_envelope.hex"))
        let parameters = try JSONSerialization.jsonObject(with: Data(contentsOf: vectors.appendingPathComponent("session_transcript_parameters.json"))) as! [String: String]
        let event: [String: Any] = [
            "specversion": "1.0", "id": "cli-apple-sample", "source": "urn:veridoc:test", "type": "veridoc.verification.requested.v1",
            "time": eventTime, "datacontenttype": "application/json",
            "data": [
                "tenant": "apple-sample", "flow": "apple-wallet-app", "payload": Data(envelope).base64EncodedString(),
                "nonce": Data(hex(parameters["Nonce"]!)).base64EncodedString(), "merchantId": parameters["Merchant ID"]!,
            ],
        ]
        try JSONSerialization.data(withJSONObject: event).write(to: directory.appendingPathComponent("event.json"))
        return Sample(directory: directory)
    }

    /// Apple's sample is signed under Apple's test root, which a production
    /// tenant may not list: the config does not load (exit 2, naming it).
    @Test func applesTestRootInAProductionTenantIsAConfigErrorWithExitTwo() throws {
        let sample = try sample(eventTime: "2022-04-01T00:00:00Z")
        defer { try? FileManager.default.removeItem(at: sample.directory) }
        let run = try CLI.run(["verify", "--config", sample.config, "--at", "2022-04-01T00:01:00Z", sample.event])
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("tenants[0].trustAnchors[0]"), "\(run.stderr)")
        #expect(run.stderr.contains("PassKit Identity Test Issuer Root CA"), "\(run.stderr)")
        #expect(!run.stdout.contains("Verdict"))
    }

    /// In a test tenant (Apple's test root as its test anchor) the signed
    /// sample is a test verdict: the banner, test_verified, exit 3, never 0.
    @Test func applesSampleInATestTenantIsATestVerdictWithExitThree() throws {
        let sample = try sample(eventTime: "2022-04-01T00:00:00Z", testTenant: true)
        defer { try? FileManager.default.removeItem(at: sample.directory) }
        let run = try CLI.run(["verify", "--config", sample.config, "--at", "2022-04-01T00:01:00Z", sample.event])
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("*** TEST — not a real ID: developer-profile response"))
        #expect(run.stdout.contains("Verdict: TEST VERIFIED (test_verified)"))
        #expect(!run.stdout.contains("Verdict: VERIFIED"))
        let json = try CLI.run(["verify", "--config", sample.config, "--at", "2022-04-01T00:01:00Z", "--json", sample.event])
        #expect(json.status == 3)
        let outcome = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let data = outcome["data"] as! [String: Any]
        #expect(data["verdict"] as? String == "test_verified")
        #expect(data["assurance"] as? [String: String] == ["level": "test", "kind": "developer-profile"])
        // Expired today: still a test outcome, rejected with the usual code.
        let today = try CLI.run(["verify", "--config", sample.config, "--at", "2026-11-29T00:00:00Z", sample.event])
        #expect(today.status == 1)
        #expect(today.stdout.contains("*** TEST — not a real ID") && today.stdout.contains("Verdict: TEST REJECTED (test_rejected)"))
        #expect(today.stdout.contains("mso.expired"))
    }

    @Test func applesSampleTodayIsRejectedAsExpiredWithExitOne() throws {
        let now = Date()
        let stamp = ISO8601DateFormatter().string(from: now.addingTimeInterval(-30))
        let sample = try sample(eventTime: stamp, testTenant: true)
        defer { try? FileManager.default.removeItem(at: sample.directory) }
        let run = try CLI.run(["verify", "--config", sample.config, "--json", sample.event])
        #expect(run.status == 1)
        let outcome = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [String: Any]
        let data = outcome["data"] as! [String: Any]
        #expect(data["verdict"] as? String == "test_rejected")
        #expect((data["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } == ["mso.expired"])
        #expect(outcome["subject"] as? String == "cli-apple-sample")
        #expect(run.stdout.split(separator: "\n").count == 1, "--json prints one line")
    }

    /// Standard input beside a file: two reports, and 3 since every event is accepted and none is production-verified.
    @Test func standardInputIsRead() throws {
        let sample = try sample(eventTime: "2022-04-01T00:00:00Z", testTenant: true)
        defer { try? FileManager.default.removeItem(at: sample.directory) }
        let run = try CLI.run(["verify", "--config", sample.config, "--at", "2022-04-01T00:01:00Z", "-", sample.event],
                              stdin: try Data(contentsOf: URL(fileURLWithPath: sample.event)))
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.components(separatedBy: "Verdict: TEST VERIFIED (test_verified)").count == 3, "\(run.stdout)")
    }

    @Test func usageAndConfigErrorsExitTwo() throws {
        let sample = try sample(eventTime: "2022-04-01T00:00:00Z")
        defer { try? FileManager.default.removeItem(at: sample.directory) }
        #expect(try CLI.run(["verify", sample.event]).status == 2, "missing --config")
        #expect(try CLI.run(["verify", "--config", sample.config, "--at", "yesterday", sample.event]).status == 2)
        let missingConfig = try CLI.run(["verify", "--config", "/nonexistent.json", sample.event])
        #expect(missingConfig.status == 2)
        #expect(missingConfig.stderr.contains("config"))
        try Data(#"{"tenants":[]}"#.utf8).write(to: URL(fileURLWithPath: sample.config))
        let emptyTenants = try CLI.run(["verify", "--config", sample.config, sample.event])
        #expect(emptyTenants.status == 2)
        #expect(emptyTenants.stderr.contains("tenants"))
    }

    private func hexFile(_ url: URL) throws -> [UInt8] {
        hex(try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
