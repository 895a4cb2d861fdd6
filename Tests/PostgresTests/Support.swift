import Foundation
import Postgres
import Testing
import TestSupport

/// The server the integration tests use: `VERIDOC_TEST_POSTGRES`, as printed by
/// `scripts/test-postgres start DIR`. Unset → those suites are skipped, so a
/// plain `swift test` needs no database.
enum TestServer {
    static let connectionString = ProcessInfo.processInfo.environment["VERIDOC_TEST_POSTGRES"]
    static var isConfigured: Bool { connectionString?.isEmpty == false }
    static let skipMessage: Comment = """
        VERIDOC_TEST_POSTGRES is unset; start a throwaway server with \
        eval "$(scripts/test-postgres start /tmp/pg-$USER)" to run the PostgreSQL tests
        """

    static func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: connectionString!, applicationName: "veridoc-tests")
    }

    /// A fresh schema, unique per call so tests can run concurrently; dropped afterwards.
    static func withScratchSchema<T>(_ body: (PostgresConnection, _ schema: String) throws -> T) throws -> T {
        let connection = try connect()
        defer { connection.close() }
        let schema = PostgresConnection.quoteIdentifier(randomName("t"))
        try connection.executeScript("CREATE SCHEMA \(schema)")
        defer {
            if !connection.isConnected { try? connection.reset() }
            try? connection.executeScript("DROP SCHEMA \(schema) CASCADE")
        }
        return try body(connection, schema)
    }

    /// Terminates backend `pid` and returns once the server no longer lists
    /// it, so the victim's next statement cannot race the signal.
    static func terminate(_ pid: Int64, from admin: PostgresConnection) throws {
        #expect(try admin.execute("SELECT pg_terminate_backend($1::int) AS ok", [.int(pid)]).bool(0, "ok") == true)
        let gone = try eventually(60, every: 0.05) {
            try admin.execute("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1::int", [.int(pid)]).int(0, "n") == 0
        }
        guard gone else { throw TestFailure("backend \(pid) still listed a minute after pg_terminate_backend") }
    }

    static func randomName(_ prefix: String) -> String {
        prefix + "_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}

/// Runs `scripts/test-postgres` with the given arguments; returns its stdout.
enum ClusterScript {
    static let path: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/test-postgres")

    /// The script starts its own server, so it needs the server binaries here,
    /// not just a reachable VERIDOC_TEST_POSTGRES.
    static var serverBinariesInstalled: Bool {
        if let custom = ProcessInfo.processInfo.environment["PG_BINDIR"] {
            return FileManager.default.isExecutableFile(atPath: custom + "/pg_ctl")
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.contains { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/pg_ctl") }
    }

    /// Uses posix_spawn and waitpid rather than Foundation's Process, whose
    /// waitUntilExit can fail to return here under concurrent tests (the child
    /// stays a zombie). Output goes through temporary files, not pipes.
    @discardableResult
    static func run(_ arguments: String...) throws -> String {
        let base = FileManager.default.temporaryDirectory
            .appendingPathComponent("veridoc-test-postgres-\(UUID().uuidString)").path
        let outPath = base + ".out", errPath = base + ".err"
        defer { try? FileManager.default.removeItem(atPath: outPath); try? FileManager.default.removeItem(atPath: errPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let argv = ([path.path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path.path, &actions, nil, argv + [nil], environ)
        guard spawned == 0 else {
            throw ScriptFailure(arguments: arguments, status: -1, stderr: "posix_spawn failed: \(spawned)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        // WIFEXITED && WEXITSTATUS == 0, spelled out: the macros do not import.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw ScriptFailure(arguments: arguments, status: status,
                                stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
        }
        return output
    }

    /// The value of `export NAME='value'` in the script's output.
    static func export(_ name: String, in output: String) -> String? {
        for line in output.split(separator: "\n") where line.hasPrefix("export \(name)='") {
            return String(line.dropFirst("export \(name)='".count).dropLast())
        }
        return nil
    }

    struct ScriptFailure: Error, CustomStringConvertible {
        let arguments: [String]
        let status: Int32
        let stderr: String
        var description: String { "test-postgres \(arguments.joined(separator: " ")) exited \(status): \(stderr)" }
    }
}
