import Foundation
import Testing
import TestSupport

/// `veridoc run` traps SIGTERM before it reads its config: a worker told to
/// stop while it starts (a rolling update, the chaos run's workerRestart
/// right after a join) exits 0, rather than dying of the signal (what the
/// soak saw) or, where it inherited SIGTERM ignored (as here, under the test
/// runner), missing it and running on.
@Suite struct RunSignalTests {
    @Test func aSIGTERMWhileTheConfigLoadsEndsInExitZero() throws {
        let folder = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = folder.appendingPathComponent("keys")
        #expect(try CLI.run(["keys", "generate", keys.path]).status == 0)
        // Ten thousand anchors: the tenants take about a second to load.
        let certificate = try String(contentsOf: keys.appendingPathComponent("merchant-cert.pem"), encoding: .utf8)
        try String(repeating: certificate, count: 10_000).write(to: folder.appendingPathComponent("anchors.pem"), atomically: true, encoding: .utf8)
        let nonceKey = folder.appendingPathComponent("nonce.key")
        try Data((0..<32).map { UInt8($0) }).write(to: nonceKey)
        chmod(nonceKey.path, 0o600)
        let config = folder.appendingPathComponent("config.json")
        try Data(#"{"tenants": [{"id": "t", "trustAnchors": ["anchors.pem"]}], "kafka": {"bootstrapServers": "127.0.0.1:9"}, "replay": {"nonceKeyFile": "nonce.key"}, "postgres": {"connectionString": "host=127.0.0.1 port=9 connect_timeout=1"}}"#.utf8).write(to: config)

        let process = Process()
        process.executableURL = Binaries.veridoc
        process.arguments = ["run", "--config", config.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // SIGTERM comes inherited as ignored: one sent before the process set
        // its trap is lost. So it is sent again until the process ends: the
        // first it traps lands while the ten thousand anchors load (its first
        // step), however long a busy machine takes to get it there.
        let pid = process.processIdentifier
        let ended = eventually(120, every: 0.1) {
            kill(pid, SIGTERM)
            return !process.isRunning
        }
        #expect(ended, "the process did not end on SIGTERM")
        if !ended { process.interrupt(); kill(pid, SIGKILL) }
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "ended by a signal: \(stderr.suffix(500))")
        #expect(process.terminationStatus == 0, "\(stderr.suffix(500))")
        #expect(!stderr.contains("worker started"), "it stopped before it started consuming")
    }
}
