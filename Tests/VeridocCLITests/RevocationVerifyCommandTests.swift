import Foundation
import MDoc
import Testing
import TestIssuer
import TestSupport
import Verification

/// `veridoc verify` reads the lists a document's MSO names, as an operator
/// runs it: a config with the tenant's `status` policy and the deployment's
/// `statusLists`, lists served over real HTTP by the test issuer.
struct RevocationVerifyCommandTests {
    struct Setup {
        var factory: TestIssuer.EventFactory
        let server: ListServer
        let directory: URL
        let config: URL
        let signer: TestIssuer.ListSigner

        init(seed: UInt64, mode: String, allowInsecure: Bool = true) throws {
            factory = try TestIssuer.EventFactory(now: Date(), seed: seed)
            server = try ListServer()
            directory = try CLI.temporaryDirectory()
            config = try factory.merchant.writeConfiguration(
                to: directory, trustAnchors: [factory.authority.iaca], tenantSettings: ["status": ["mode": mode, "maxWaitSeconds": 60]],
                settings: ["statusLists": ["allowInsecure": allowInsecure, "timeoutSeconds": 60]])
            signer = try factory.authority.issuingListSigner(now: factory.now)
        }

        func publish(_ entries: [UInt8], at path: String) throws {
            let now = Int64(factory.now.timeIntervalSince1970)
            let publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, entries), subject: server.url(path),
                                                     issuedAt: now - 60, expiresAt: now + 3_600)
            server.publish(path, try publisher.signed(by: signer.key, chain: [signer.certificate]), mediaType: "application/statuslist+cwt")
        }

        mutating func verify(index: UInt64, path: String) throws -> (status: Int32, data: [String: Any]) {
            var options = TestIssuer.EventOptions()
            options.status = MSOStatus(statusList: .init(index: index, uri: server.url(path)))
            let event = try factory.event(.isoDeviceResponse, options: options)
            let file = directory.appendingPathComponent("event-\(index).json")
            try Data(event.json()).write(to: file)
            let run = try CLI.run(["verify", "--config", config.path, "--json", file.path])
            let outcome = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
            return (run.status, try #require(outcome["data"] as? [String: Any]))
        }

        func remove() {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func codes(_ data: [String: Any]) -> [String] {
        (data["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
    }

    @Test func aValidEntryVerifiesAndARevokedOneIsRejected() throws {
        var setup = try Setup(seed: 61, mode: "required")
        defer { setup.remove() }
        try setup.publish([0, 1, 0, 0, 0, 0, 0, 0], at: "/list")
        let valid = try setup.verify(index: 0, path: "/list")
        #expect(valid.status == 0 && valid.data["verdict"] as? String == "verified" && valid.data["status"] as? String == "valid")
        let revoked = try setup.verify(index: 1, path: "/list")
        #expect(revoked.status == 1 && Self.codes(revoked.data) == ["status.revoked"] && revoked.data["status"] as? String == "revoked")
        let document = try #require(revoked.data["document"] as? [String: Any])
        #expect((document["status"] as? [String: Any])?["state"] as? String == "revoked")
        // The readable report says it too.
        let human = try CLI.run(["verify", "--config", setup.config.path, setup.directory.appendingPathComponent("event-1.json").path])
        #expect(human.status == 1 && human.stdout.contains("✗ document.status") && human.stdout.contains("status:   REVOKED by its issuer"), "\(human.stdout)")
    }

    /// Every way a list can fail (`TestIssuer.ListFault`), as an operator
    /// would meet it: `required` rejects with the step that failed,
    /// `bestEffort` verifies and says undetermined with that step.
    @Test(arguments: ["required", "bestEffort"])
    func everyListFaultIsUndeterminedWithItsCause(_ mode: String) throws {
        var setup = try Setup(seed: mode == "required" ? 64 : 65, mode: mode)
        defer { setup.remove() }
        for fault in TestIssuer.ListFault.allCases {
            let path = "/fault/\(fault.rawValue)"
            if let response = try fault.response(uri: setup.server.url(path), authority: setup.factory.authority, signer: setup.signer, now: setup.factory.now) {
                setup.server.put(path, ListServer.Answer(status: response.status, contentType: response.contentType, body: response.body))
            }
            let run = try setup.verify(index: TestIssuer.ListFault.index, path: path)
            let document = run.data["document"] as? [String: Any]
            let status = document?["status"] as? [String: Any]
            #expect(run.data["status"] as? String == "undetermined" && status?["cause"] as? String == fault.step, "\(fault): \(run.data)")
            if mode == "required" {
                #expect(run.status == 1 && Self.codes(run.data) == ["status.undetermined"], "\(fault)")
            } else {
                #expect(run.status == 0 && run.data["verdict"] as? String == "verified" && Self.codes(run.data).isEmpty, "\(fault)")
            }
        }
        // A server that is down: a port nothing listens on.
        let gone = try ClosedPort()
        defer { gone.close() }
        let deadURI = gone.url("/list")
        var options = TestIssuer.EventOptions()
        options.status = MSOStatus(statusList: .init(index: 0, uri: deadURI))
        let file = setup.directory.appendingPathComponent("event-down.json")
        try Data(try setup.factory.event(.isoDeviceResponse, options: options).json()).write(to: file)
        let down = try CLI.run(["verify", "--config", setup.config.path, "--json", file.path])
        let data = try #require(try JSONSerialization.jsonObject(with: Data(down.stdout.utf8)) as? [String: Any])["data"] as? [String: Any]
        #expect(((data?["document"] as? [String: Any])?["status"] as? [String: Any])?["cause"] as? String == "fetch", "\(down.stdout)")
        #expect(down.status == (mode == "required" ? 1 : 0))
    }

    @Test func requiredRejectsWhatCannotBeDeterminedAndBestEffortSaysSo() throws {
        var required = try Setup(seed: 62, mode: "required")
        defer { required.remove() }
        let rejected = try required.verify(index: 0, path: "/nothing-here")
        #expect(rejected.status == 1 && Self.codes(rejected.data) == ["status.undetermined"])
        var bestEffort = try Setup(seed: 63, mode: "bestEffort")
        defer { bestEffort.remove() }
        let accepted = try bestEffort.verify(index: 0, path: "/nothing-here")
        #expect(accepted.status == 0 && accepted.data["verdict"] as? String == "verified")
        #expect(accepted.data["status"] as? String == "undetermined")
        let document = try #require(accepted.data["document"] as? [String: Any])
        #expect((document["status"] as? [String: Any])?["cause"] as? String == "http_status")
    }

    /// Without `statusLists.allowInsecure`, a loopback list is never contacted.
    @Test func aLoopbackListIsNotContactedByAStrictDeployment() throws {
        var setup = try Setup(seed: 64, mode: "required", allowInsecure: false)
        defer { setup.remove() }
        try setup.publish([0], at: "/list")
        let run = try setup.verify(index: 0, path: "/list")
        #expect(run.status == 1 && Self.codes(run.data) == ["status.undetermined"])
        #expect(setup.server.requests("/list") == 0)
    }
}
