import Foundation
import Testing
import TestSupport

/// A binary older than the database's schema refuses to start: the worker,
/// `migrate`, `serve` and the commands that read and write the database exit
/// with status 2, naming both versions, and change nothing.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct SchemaVersionTests {
    @Test func everyCommandThatOpensTheDatabaseRefusesANewerSchema() throws {
        let setup = try CLI.WorkerSetup()
        defer { setup.remove() }
        let (database, folder, config) = (setup.database, setup.folder, setup.config)

        let migrated = try CLI.run(["migrate", "--config", config.path])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let connection = try database.connect()
        defer { connection.close() }
        let known = try #require(try connection.execute("SELECT max(version) AS version FROM schema_migrations").int(0, "version"))
        let newer = known + 2
        try connection.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from a newer binary')", [.int(newer)])

        let report = folder.appendingPathComponent("report.html")
        for command in [["migrate"], ["run"], ["serve"], ["stats"], ["report", "--html", report.path], ["purge"], ["forget", "--tenant", "t"]] {
            let run = try Self.run(command + ["--config", config.path], in: folder)
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("the database's schema is at version \(newer), this binary knows up to \(known): upgrade veridoc"),
                    "\(command): \(run.stderr)")
        }
        #expect(try database.count("SELECT count(*) AS count FROM schema_migrations") == Int(known) + 1)
        #expect(!FileManager.default.fileExists(atPath: report.path))
    }

    /// `veridoc ARGUMENTS`, stopped if it has not exited within 60 s: with the
    /// check gone, `run` and `serve` would start and never end.
    static func run(_ arguments: [String], in folder: URL) throws -> CLI.Run {
        let errors = folder.appendingPathComponent("stderr-\(UUID().uuidString)")
        let process = try CLI.start(arguments, stderrTo: errors)
        let exited = eventually(60, every: 0.1) { !process.isRunning }
        if !exited { process.terminate() }
        process.waitUntilExit()
        let stderr = try String(contentsOf: errors, encoding: .utf8)
        return CLI.Run(status: exited ? process.terminationStatus : -1, stdout: "", stderr: exited ? stderr : "still running after 60 s: " + stderr)
    }
}
