import Foundation
import Kafka
import Testing
import TestIssuer
import TestSupport
import Verification

/// Apple's test conditions through a real worker: a test tenant beside a
/// production one in one deployment. The mock responses end `test_verified`
/// with their kind in the outcome event and the results row, the production
/// tenant's event is unmarked, and `stats` shows test outcomes only when asked.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct TestConditionsPipelineTests {
    @Test func mockResponsesAreMarkedAsTestsFromTheTopicToTheDatabaseAndKeptApart() throws {
        let fixture = try PipelineFixture()
        // The test tenant: its own merchant keys and Apple's test Team ID, trusting its test root only as a test root.
        var testFactory = try TestIssuer.EventFactory(now: fixture.factory.now, seed: 28)
        testFactory.merchant = try TestIssuer.Merchant(tenantID: "acme-test", merchantID: "merchant.com.example.acme.test", teamID: TestKind.simulatorTeamID)
        let testFolder = fixture.directory.appendingPathComponent("test-tenant")
        let testConfig = try testFactory.merchant.writeConfiguration(to: testFolder, trustAnchors: [testFactory.authority.iaca])
        var testTenant = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: testConfig)) as? [String: Any])?["tenants"] as? [[String: Any]]).first!
        let anchors = (testTenant.removeValue(forKey: "trustAnchors") as? [String] ?? []).map { "test-tenant/" + $0 }
        testTenant["encryptionKeys"] = (testTenant["encryptionKeys"] as? [String] ?? []).map { "test-tenant/" + $0 }
        testTenant["testConditions"] = ["kinds": ["simulator", "developerProfile"], "trustAnchors": anchors]
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.config)) as? [String: Any])
        root["tenants"] = (root["tenants"] as? [[String: Any]] ?? []) + [testTenant]
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: fixture.config)

        let production = try fixture.factory.event(.appleWalletApp)
        var simulatorOptions = TestIssuer.EventOptions()
        simulatorOptions.mockShape = .simulator
        let simulator = try testFactory.event(.appleWalletApp, options: simulatorOptions)
        var profileOptions = TestIssuer.EventOptions()
        profileOptions.mockShape = .developerProfile
        let profile = try testFactory.event(.isoDeviceResponse, options: profileOptions)
        let ids = try [production, simulator, profile].map { try #require($0.id) }
        let expected: [String: (verdict: String, kind: String?)] = [
            ids[0]: ("verified", nil), ids[1]: ("test_verified", "simulator"), ids[2]: ("test_verified", "developer-profile"),
        ]

        let worker = try fixture.startWorker()
        try fixture.produce([production, simulator, profile].map { ("k", $0.json()) })
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 3 }, "\(worker.log.suffix(1500))")

        let connection = try fixture.database.connect()
        defer { connection.close() }
        let rows = try connection.execute("SELECT event_id, verdict, assurance, test_kind FROM results")
        for row in 0..<rows.rowCount {
            let id = try #require(rows.string(row, "event_id"))
            let want = try #require(expected[id])
            #expect(rows.string(row, "verdict") == want.verdict, "\(id)")
            #expect(rows.string(row, "assurance") == (want.kind == nil ? "production" : "test"), "\(id)")
            #expect(rows.string(row, "test_kind") == want.kind, "\(id)")
        }

        let outcomes = try fixture.outcomeEvents(expected: 3)
        #expect(outcomes.count == 3)
        for outcome in outcomes {
            let data = try #require(outcome["data"] as? [String: Any])
            let subject = try #require(outcome["subject"] as? String)
            let want = try #require(expected[subject])
            #expect(data["verdict"] as? String == want.verdict)
            if let kind = want.kind {
                let assurance = try #require(data["assurance"] as? [String: Any], "a test outcome carries its marker")
                #expect(assurance["level"] as? String == "test" && assurance["kind"] as? String == kind)
            } else {
                #expect(data["assurance"] == nil, "production outcomes are as they were")
            }
        }
        #expect(worker.terminate() == 0)

        let byDefault = try Subprocess.run(Binaries.veridoc, ["stats", "--config", fixture.config.path], mergingStandardError: true)
        #expect(byDefault.status == 0, "\(byDefault.output)")
        #expect(byDefault.output.contains("acme") && !byDefault.output.contains("acme-test") && !byDefault.output.contains("test_verified"), "\(byDefault.output)")
        let tests = try Subprocess.run(Binaries.veridoc, ["stats", "--config", fixture.config.path, "--assurance", "test"], mergingStandardError: true)
        #expect(tests.status == 0 && tests.output.contains("acme-test") && tests.output.contains("test_verified"), "\(tests.output)")
    }
}
