@testable import DemoKit
import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

/// `veridoc-dev demo` as `make demo` runs it: its own PostgreSQL and broker, a
/// realistic stream through the real worker, a summary checked against the
/// database; nothing left running, and no personal value in its output.
@Suite(.serialized, .enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/postgresql"), "PostgreSQL server binaries are not installed"))
struct DemoTests {
    @Test func demoRunsEndToEndLeavesNothingBehindAndLogsNoPersonalData() throws {
        let planted = "Xylophonist-PLANTED-\(UInt32.random(in: 0...UInt32.max))"
        let run = try runDemo(["demo", "--events", "500", "--family-name", planted])
        #expect(run.status == 0, "\(run.output.suffix(3000))")

        // The summary's own consistency lines, and counts that add up.
        #expect(run.output.contains("✓ one per event id"))
        #expect(!run.output.contains("✗"))
        let stored = number(after: "results stored", in: run.output)
        let verified = number(after: "verified / rejected", in: run.output)
        #expect(stored != nil && verified != nil && verified! <= stored!)
        let reasonRows = run.output.split(separator: "\n").filter { $0.hasPrefix("  verified ") || $0.hasPrefix("  rejected ") }
        let rowTotal = reasonRows.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        #expect(rowTotal >= stored ?? 0, "every stored result appears in the reason table")

        // No personal value in anything the demo printed (worker logs at debug level included).
        #expect(run.output.contains("\"level\":\"debug\""), "the capture includes the worker's debug log lines")
        #expect(!run.output.contains(planted))
        #expect(!run.output.contains(Data(planted.utf8).base64EncodedString()))

        // Nothing it started is still running: no postmaster on its folder, no folder.
        let folder = demoFolder(in: run.output)
        #expect(folder != nil, "the demo names its folder")
        if let folder { #expect(serverStops(on: folder), "the demo's PostgreSQL was stopped") }
        let folderRemains = folder.map { FileManager.default.fileExists(atPath: $0) } ?? true
        #expect(!folderRemains, "the demo removed its folder (keys included)")
    }

    /// `demo --keep`: the printed `--config` serves `stats` against the kept
    /// database, and the printed stop command stops it and removes every file
    /// the demo made, the tenant's private keys included.
    @Test func aKeptDemoTellsHowToQueryAndHowToRemoveIt() throws {
        let run = try runDemo(["demo", "--events", "100", "--keep"])
        #expect(run.status == 0, "\(run.output.suffix(2000))")
        let lines = run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let stats = try #require(lines.first { $0.hasPrefix("veridoc stats --config ") }, "\(run.output.suffix(1500))")
        let config = String(stats.dropFirst("veridoc stats --config ".count))
        let folder = URL(fileURLWithPath: config).deletingLastPathComponent().deletingLastPathComponent()
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("config/pki").path), "the kept config has its keys")
        let counted = try Subprocess.run(Binaries.veridoc, ["stats", "--config", config], mergingStandardError: true)
        #expect(counted.status == 0 && counted.output.contains("acme") && counted.output.contains("verified"), "the kept database answers stats: \(counted.output)")

        let stopIndex = try #require(lines.firstIndex { $0.hasPrefix("Stop it and remove everything") })
        let stop = lines[stopIndex + 1]
        let stopped = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", stop], mergingStandardError: true)
        #expect(stopped.status == 0, "\(stop): \(stopped.output)")
        #expect(!FileManager.default.fileExists(atPath: folder.path), "database, config and keys are gone")
        #expect(serverStops(on: folder.path), "the kept PostgreSQL was stopped")
    }

    /// Ctrl-C while the demo runs: it stops its PostgreSQL and removes its
    /// folder (the demo tenant's private keys) before exiting 130, instead of
    /// leaving a postmaster running and keys on disk.
    @Test func anInterruptedDemoLeavesNothingBehind() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-demo-test-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let pid = try spawnDemo(["demo", "--events", "100000", "--rate", "200"], log: log)
        var output = ""
        let deadline = Date().addingTimeInterval(120)
        // Once the broker starts, PostgreSQL is up and the folder holds the tenant's keys.
        while !output.contains("Kafka-protocol broker") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        }
        let folder = demoFolder(in: output)
        let started = folder.map { !postmasterPIDs(on: $0).isEmpty } ?? false
        #expect(started, "the demo got as far as its PostgreSQL: \(output.suffix(2000))")

        kill(pid, SIGINT)
        var status: Int32 = 0
        let exitDeadline = Date().addingTimeInterval(60)
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < exitDeadline else {
                Issue.record("the demo did not exit within 60 s of SIGINT")
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 130, "exit 130 after SIGINT, status \(status)")
        if let folder { #expect(serverStops(on: folder), "the demo's PostgreSQL was stopped") }
        let folderRemains = folder.map { FileManager.default.fileExists(atPath: $0) } ?? true
        #expect(!folderRemains, "the demo removed its folder (keys included)")
    }

    private func number(after label: String, in output: String) -> Int? {
        guard let line = output.split(separator: "\n").first(where: { $0.contains(label) }) else { return nil }
        return line.replacingOccurrences(of: label, with: "").split(whereSeparator: { $0 == " " || $0 == "/" }).compactMap { Int($0) }.first
    }

    /// The folder the demo says it runs PostgreSQL in (`/tmp/veridoc-demo-…`).
    private func demoFolder(in output: String) -> String? {
        output.split(separator: "\n").first { $0.contains("initdb into") }.flatMap { line in
            line.split(separator: " ").first { $0.hasPrefix("/tmp/veridoc-demo-") }
        }.map { "/tmp/" + $0.dropFirst(5).prefix(while: { $0 != "/" }) }
    }

    /// Pids of postmasters serving a data directory inside `folder`: the
    /// demo's own server, named by its `-D` argument. Other tests (the other
    /// integration lane) start and stop PostgreSQL servers of their own at the
    /// same time, so counting every postmaster on the machine says nothing
    /// about the demo's.
    private func postmasterPIDs(on folder: String) -> [Int32] {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard let program = arguments.first, program.hasPrefix("/usr/lib/postgresql/"), program.hasSuffix("/bin/postgres") else { return false }
            return arguments.contains { $0.hasPrefix(prefix) }
        }
    }

    /// Whether the postmaster on `folder` is gone, waiting for it to exit (a
    /// condition, not a duration: `pg_ctl stop -w` has returned, but the
    /// process table may lag behind its exit on a busy machine).
    private func serverStops(on folder: String) -> Bool {
        eventually(30) { postmasterPIDs(on: folder).isEmpty }
    }

    /// Runs the binary with stdout and stderr into one file (never a pipe: the
    /// demo's PostgreSQL must not inherit a pipe the test waits on).
    private func runDemo(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-demo-test-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let pid = try spawnDemo(arguments, log: log)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return (status & 0x7f == 0 ? (status >> 8) & 0xff : -1, output)
    }

    private func spawnDemo(_ arguments: [String], log: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([Binaries.veridocDev.path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        // Debug logging: the capture must hold every line the worker can write.
        let variables: [String] = ProcessInfo.processInfo.environment.filter { $0.key != "VERIDOC_LOG_LEVEL" }.map { "\($0.key)=\($0.value)" }
            + ["VERIDOC_LOG_LEVEL=debug"]
        let environment = variables.map { strdup($0) }
        defer { environment.forEach { free($0) } }
        // Default dispositions, as from a shell: a test runner may ignore SIGINT, and children inherit that.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        guard posix_spawn(&pid, Binaries.veridocDev.path, &actions, &attributes, argv + [nil], environment + [nil]) == 0 else { throw TestFailure("cannot start the demo") }
        return pid
    }
}

/// What a signal runs before the bench or demo exits.
@Suite struct CleanupListTests {
    @Test func runsWhatIsStillRegisteredNewestFirstOnce() {
        let list = CleanupList()
        let order = Mutex<[String]>([])
        _ = list.add { order.withLock { $0.append("folder") } }
        let worker = list.add { order.withLock { $0.append("stopped worker") } }
        _ = list.add { order.withLock { $0.append("database") } }
        _ = list.add { order.withLock { $0.append("worker") } }
        list.remove(worker)
        #expect(list.count == 3)
        list.runAll()
        #expect(order.withLock { $0 } == ["worker", "database", "folder"])
        #expect(list.count == 0)
        list.runAll()
        #expect(order.withLock { $0 }.count == 3, "a second signal runs nothing twice")
    }
}
