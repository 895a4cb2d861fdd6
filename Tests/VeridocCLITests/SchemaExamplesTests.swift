import CBOR
import Crypto
import DemoKit
import Foundation
import Testing
import TestSupport
import Verification

/// The examples beside the event schemas are real: each request example is
/// judged by `veridoc verify` as its name says under the example tenant it
/// was made for, and each outcome example is what `veridoc verify --json`
/// makes of its request (sealed claims included, which the integration's
/// key opens). `make lint-schemas` validates the same files against the schemas.
@Suite struct SchemaExamplesTests {
    static let examples = Binaries.repository.appendingPathComponent("Schemas/examples")

    /// The tenant folder as a deployment would hold it: git keeps no modes, so the keys are made 0600 again.
    static func tenantCopy() throws -> (folder: URL, at: String) {
        let folder = try CLI.temporaryDirectory().appendingPathComponent("tenant")
        try FileManager.default.copyItem(at: examples.appendingPathComponent(SchemaExamples.tenantFolder), to: folder)
        for key in ["pki/merchant-current.pem", "pki/merchant-rotated.pem", "pki/web-reader-key.pem", "pki/openid4vp-verifier-key.pem", SchemaExamples.outcomeRecipientPrivateKey] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.appendingPathComponent(key).path)
        }
        let at = try String(contentsOf: folder.appendingPathComponent("AT"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return (folder, at)
    }

    static func verify(_ example: String, config: String, tenant: URL, at: String) throws -> (status: Int32, outcome: [String: Any]) {
        let run = try CLI.run(["verify", "--config", tenant.appendingPathComponent(config).path, "--at", at, "--json",
                               examples.appendingPathComponent(example).path])
        let outcome = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(example): \(run.stderr)")
        return (run.status, outcome)
    }

    @Test func everyEventExampleIsListed() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.examples.path).filter { $0.hasPrefix("verification-") }
        #expect(Set(files) == Set(SchemaExamples.requests.map(\.name) + SchemaExamples.testRequests.map(\.name) + SchemaExamples.outcomes.map(\.name)))
    }

    @Test func requestExamplesAreJudgedAsTheirNamesSay() throws {
        let (tenant, at) = try Self.tenantCopy()
        defer { try? FileManager.default.removeItem(at: tenant.deletingLastPathComponent()) }
        for request in SchemaExamples.requests {
            let rejected = request.name.contains(".rejected-")
            let (status, outcome) = try Self.verify(request.name, config: "config.json", tenant: tenant, at: at)
            let data = try #require(outcome["data"] as? [String: Any])
            #expect(status == (rejected ? 1 : 0), "\(request.name)")
            #expect(data["verdict"] as? String == (rejected ? "rejected" : "verified"), "\(request.name)")
            #expect(data["flow"] as? String == request.flow.rawValue, "\(request.name)")
            let codes = (data["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
            #expect(codes == request.reasons, "\(request.name)")
        }
    }

    /// The test tenant's example is a developer-profile response: a test verdict with its marker,
    /// and the same event is no production outcome: the production tenant does not know the test tenant's id.
    @Test func testExamplesAreMarkedAsTests() throws {
        let (tenant, at) = try Self.tenantCopy()
        defer { try? FileManager.default.removeItem(at: tenant.deletingLastPathComponent()) }
        for (name, shape) in SchemaExamples.testRequests {
            #expect(name.contains(".test-"), "\(name) says it is a test")
            let (status, outcome) = try Self.verify(name, config: SchemaExamples.testConfig, tenant: tenant, at: at)
            let data = try #require(outcome["data"] as? [String: Any])
            #expect(status == 3, "veridoc verify exits 3 for a test verdict: \(name)")
            #expect(data["verdict"] as? String == "test_verified", "\(name)")
            let assurance = try #require(data["assurance"] as? [String: Any])
            #expect(assurance["level"] as? String == "test" && assurance["kind"] as? String == shape.kind.rawValue, "\(assurance)")
            let production = try Self.verify(name, config: "config.json", tenant: tenant, at: at)
            #expect(production.status == 1 && (production.outcome["data"] as? [String: Any])?["verdict"] as? String == "rejected")
        }
    }

    @Test func outcomeExamplesAreWhatVerifyMakesOfTheirRequests() throws {
        let (tenant, at) = try Self.tenantCopy()
        defer { try? FileManager.default.removeItem(at: tenant.deletingLastPathComponent()) }
        for example in SchemaExamples.outcomes {
            var committed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.examples.appendingPathComponent(example.name))) as? [String: Any])
            var made = try Self.verify(example.request, config: example.config, tenant: tenant, at: at).outcome
            let verdict = try #require((committed["data"] as? [String: Any])?["verdict"] as? String)
            #expect(example.name.contains(".\(verdict)"), "\(example.name) says \(verdict)")
            // HPKE sealing is randomised: the claims are compared by what they open to.
            let committedClaims = Self.removeClaims(&committed)
            let madeClaims = Self.removeClaims(&made)
            #expect(NSDictionary(dictionary: committed).isEqual(to: made), "\(example.name) is not what veridoc verify --json makes of \(example.request)")
            #expect((committedClaims == nil) == (madeClaims == nil), "\(example.name)")
            if let committedClaims, let madeClaims {
                let requestID = try #require((committed["data"] as? [String: Any])?["requestId"] as? String)
                let key = try PrivateKey(pemFile: tenant.appendingPathComponent(SchemaExamples.outcomeRecipientPrivateKey))
                let opened = try OutcomeClaims.open(committedClaims, requestID: requestID, recipient: key)
                #expect(opened == (try OutcomeClaims.open(madeClaims, requestID: requestID, recipient: key)))
                // The elements asked for are sealed, whatever their intent (age_over_21 is willNotStore).
                let namespaces = try #require(try CBORDecoder().decode(opened).entries)
                #expect(namespaces.map { $0.key.text } == ["org.iso.18013.5.1"])
                let elements = try #require(namespaces.first?.value.entries).compactMap { $0.key.text }
                #expect(Set(elements) == ["age_over_21", "family_name", "portrait"], "\(elements)")
            }
        }
    }

    /// The human report of the app example (which asks `age(atLeast: 21)`) answers the age
    /// check and says which element answered; every element of its mDL is typed.
    @Test func theHumanReportAnswersTheAgeCheck() throws {
        let (tenant, at) = try Self.tenantCopy()
        defer { try? FileManager.default.removeItem(at: tenant.deletingLastPathComponent()) }
        let run = try CLI.run(["verify", "--config", tenant.appendingPathComponent("config.json").path, "--at", at,
                               Self.examples.appendingPathComponent(SchemaExamples.requests[0].name).path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Age checks:\n  at least 21: yes — from org.iso.18013.5.1/age_over_21\n"), "\(run.stdout)")
        #expect(run.stdout.contains("disclosed elements") && !run.stdout.contains("*,") && !run.stdout.contains("*\n"), "\(run.stdout)")
    }

    static func removeClaims(_ outcome: inout [String: Any]) -> [String: Any]? {
        guard var data = outcome["data"] as? [String: Any] else { return nil }
        let claims = data.removeValue(forKey: "claims") as? [String: Any]
        outcome["data"] = data
        return claims
    }
}
