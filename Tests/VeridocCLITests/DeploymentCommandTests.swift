import Foundation
import Testing
import TestSupport

/// Every command that takes `--config` starts from the same deployment: a
/// file one command refuses, all refuse, before touching the database or the
/// broker, naming the setting and the file's problem.
@Suite struct DeploymentCommandTests {
    @Test func everyConfigCommandRefusesWhatTheWorkerRefuses() throws {
        let folder = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Nothing listens on either: a command that got past the config would fail otherwise, with status 1.
        let config = try CLI.workerConfig(in: folder, postgres: "postgresql://127.0.0.1:9/none?connect_timeout=1")
        let event = folder.appendingPathComponent("event.json")
        try Data("{}".utf8).write(to: event)
        let report = folder.appendingPathComponent("report.html")
        let commands = [["run"], ["migrate"], ["serve"], ["verify", event.path], ["stats"], ["report", "--html", report.path], ["purge"],
                        ["forget", "--tenant", "t"], ["keys", "rotate-data-key"]]

        // The same broken part, read by the tenant loader every command shares.
        let certificate = folder.appendingPathComponent("keys/merchant-cert.pem")
        let aside = folder.appendingPathComponent("merchant-cert.pem")
        try FileManager.default.moveItem(at: certificate, to: aside)
        for command in commands {
            let run = try CLI.run(Self.withConfig(command, config))
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("tenants[0].trustAnchors[0]") && run.stderr.contains("does not exist"), "\(command): \(run.stderr)")
        }

        // A key file others may read is refused by each command alike: one reader, one rule.
        let nonceKey = folder.appendingPathComponent("nonce.key")
        #expect(chmod(nonceKey.path, 0o644) == 0)
        try FileManager.default.moveItem(at: aside, to: certificate)
        for command in commands {
            let run = try CLI.run(Self.withConfig(command, config))
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("replay.nonceKeyFile") && run.stderr.contains("readable by other users"), "\(command): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: report.path))
    }

    /// The replay key is optional for the deployment and required by the
    /// commands that key or issue nonces with it: they say which setting.
    @Test func theWorkerAndServeNameTheMissingReplayKey() throws {
        let folder = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try CLI.workerConfig(in: folder, postgres: "postgresql://127.0.0.1:9/none?connect_timeout=1")
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any])
        root["replay"] = nil
        try JSONSerialization.data(withJSONObject: root).write(to: config)
        for command in [["run"], ["serve"]] {
            let run = try CLI.run(Self.withConfig(command, config))
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("replay.nonceKeyFile: required"), "\(command): \(run.stderr)")
        }
    }

    /// `keys rotate-data-key` is two words: `--config` goes after them.
    static func withConfig(_ command: [String], _ config: URL) -> [String] {
        command + ["--config", config.path]
    }
}
