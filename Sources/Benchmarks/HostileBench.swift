import DemoKit
import Foundation
import TestIssuer
import Verification

/// The hostile row of `make bench`: for each `HostileDimension`, the largest
/// event of that dimension within the size limit, verified by `veridoc verify`
/// in a child process of its own, set against a valid event of the same size
/// in the same flow. A child per event makes its peak resident size its own
/// (a process's high-water mark never falls) and its CPU exact (`wait4`).
public enum HostileBench {
    public struct Options: Sendable {
        /// The size every event is built up to (the worker refuses larger ones).
        public var maxEventBytes: Int
        /// Runs of each event; the least CPU and the least peak RSS are kept.
        public var runs: Int
        /// A run still going after this long is killed and reported as timed out.
        public var timeoutSeconds: Double
        public var dimensions: [TestIssuer.HostileDimension]
        /// What the worst ratio should not exceed; reported, never enforced.
        public var goalRatio: Double = 20
        /// Where to leave the events, their tenant config and the `veridoc verify`
        /// line of each (commands.txt), to profile one; nil removes them.
        public var keepDirectory: URL?

        public init(maxEventBytes: Int, runs: Int, timeoutSeconds: Double, dimensions: [TestIssuer.HostileDimension] = TestIssuer.HostileDimension.allCases) {
            self.maxEventBytes = maxEventBytes
            self.runs = runs
            self.timeoutSeconds = timeoutSeconds
            self.dimensions = dimensions
        }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// What one child run cost, from `wait4`'s rusage.
    struct Usage {
        var cpuSeconds: Double
        var maxRSSBytes: Int
        var exitStatus: Int32?
        var timedOut: Bool
    }

    /// The verdict and reason codes of the outcome a run printed (`verify --json`).
    struct Outcome {
        var verdict: String
        var reasons: [String]
    }

    public static func run(product: String, tooling: String, options: Options, directory: URL, progress: (String) -> Void) throws -> BenchReport.Hostile {
        let files = FileManager.default
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        let removeDirectory = Interruption.register { try? FileManager.default.removeItem(at: directory) }
        defer {
            try? files.removeItem(at: directory)
            Interruption.unregister(removeDirectory)
        }
        // Whole seconds, so that `--at` names exactly the factory's `now`.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let events = try TestIssuer.HostileEvents(now: now, seed: 2226)
        let kept = options.keepDirectory
        if let kept { try files.createDirectory(at: kept, withIntermediateDirectories: true) }
        let config = try events.writeConfiguration(to: (kept ?? directory).appendingPathComponent("tenant"))
        var commands: [String] = []

        func measure(_ json: [UInt8], name: String, label: String, runs: Int = options.runs) throws -> (usage: Usage, outcome: Outcome) {
            let eventPath = (kept ?? directory).appendingPathComponent("\(name).json").path
            let arguments = ["verify", "--config", config.path, "--at", wholeSecondsRFC3339(now), "--json", eventPath]
            guard files.createFile(atPath: eventPath, contents: Data(json)) else { throw Failure(description: "cannot write \(eventPath)") }
            commands.append(([product] + arguments).joined(separator: " "))
            var best: Usage?
            var outcome = Outcome(verdict: "error", reasons: [])
            for run in 0..<max(1, runs) {
                let stdout = directory.appendingPathComponent("outcome.json").path
                let usage = try verify(helper: tooling, arguments: arguments, stdout: stdout, timeout: options.timeoutSeconds, scratch: directory)
                if run == 0 { outcome = Self.outcome(usage, stdout: stdout) }
                best = best.map { Usage(cpuSeconds: min($0.cpuSeconds, usage.cpuSeconds), maxRSSBytes: min($0.maxRSSBytes, usage.maxRSSBytes),
                                        exitStatus: $0.exitStatus, timedOut: $0.timedOut) } ?? usage
                // Repeats only take noise out of short runs; a long one is its own measurement.
                if usage.timedOut || usage.cpuSeconds > 2 { break }
            }
            if kept == nil { try? files.removeItem(atPath: eventPath) }
            progress("  \(label): \(String(format: "%.0f", best!.cpuSeconds * 1000)) ms CPU, \(best!.maxRSSBytes >> 20) MB peak RSS, \(outcome.verdict)")
            return (best!, outcome)
        }

        func normalRun(_ json: [UInt8], flow: Flow, name: String, label: String, runs: Int = options.runs) throws -> BenchReport.HostileNormal {
            let (usage, outcome) = try measure(json, name: name, label: label, runs: runs)
            return BenchReport.HostileNormal(
                flow: flow.rawValue, bytes: json.count, cpuMilliseconds: usage.cpuSeconds * 1000,
                peakRSSMegabytes: Double(usage.maxRSSBytes) / 1_048_576, verdict: usage.timedOut ? "timeout" : outcome.verdict)
        }
        progress("hostile input: start-up, the smallest valid event …")
        var small = events.factory
        let startup = try normalRun(try small.event(.isoDeviceResponse).json(), flow: .isoDeviceResponse, name: "startup", label: "start-up",
                                    // It anchors the line every net ratio is read from: worth a few more runs.
                                    runs: max(5, options.runs))
        // Valid events of the flow and size each hostile one is set against, measured once each.
        var normals: [BenchReport.HostileNormal] = []
        func normal(_ flow: Flow, bytes: Int) throws -> BenchReport.HostileNormal {
            // Within 1 % of the size, a valid event's cost (linear in it) is the same within the noise.
            if let known = normals.first(where: { $0.flow == flow.rawValue && abs($0.bytes - bytes) <= max(64, bytes / 100) }) { return known }
            progress("hostile input: a valid \(flow.rawValue) event of \(bytes) bytes …")
            let json = try events.normalEvent(bytes: bytes, flow: flow)
            let measured = try normalRun(json, flow: flow, name: "normal-\(flow.rawValue)-\(json.count)", label: "normal \(flow.rawValue)")
            normals.append(measured)
            return measured
        }
        func hostile(_ dimension: TestIssuer.HostileDimension, _ json: [UInt8], count: Int, name: String) throws -> BenchReport.HostileMeasure {
            let baseline = try normal(dimension.flow, bytes: json.count)
            let (usage, outcome) = try measure(json, name: name, label: "\(dimension.rawValue) × \(count)")
            return BenchReport.HostileMeasure(
                bytes: json.count, count: count, cpuMilliseconds: usage.cpuSeconds * 1000, peakRSSMegabytes: Double(usage.maxRSSBytes) / 1_048_576,
                normal: baseline, verdict: usage.timedOut ? "timeout" : outcome.verdict, reasons: outcome.reasons)
        }

        let verifier = try events.verifier()
        func reasons(_ json: [UInt8]) -> [String] {
            verifier.verify(eventJSON: json, at: now).report.reasons.map(\.code.rawValue)
        }
        var rows: [BenchReport.HostileRow] = []
        for dimension in options.dimensions {
            progress("hostile input: \(dimension.rawValue), the largest event within \(options.maxEventBytes) bytes …")
            let (json, count) = try events.event(dimension, maxBytes: options.maxEventBytes)
            let atLimit = try hostile(dimension, json, count: count, name: dimension.rawValue)
            // A budget the largest event exceeds spares the code this dimension
            // loads; the largest event read like a small one still reaches it.
            let probe = min(count, 32)
            let expected = reasons(try events.event(dimension, count: probe))
            var largestRead: BenchReport.HostileMeasure?
            if atLimit.verdict != "timeout", reasons(json) != expected {
                var (read, refused) = (probe, count)
                while refused - read > max(1, refused / 64) {
                    let middle = read + (refused - read) / 2
                    if reasons(try events.event(dimension, count: middle)) == expected { read = middle } else { refused = middle }
                }
                progress("  \(dimension.rawValue): refused from about \(refused) items; measuring \(read)")
                largestRead = try hostile(dimension, try events.event(dimension, count: read), count: read, name: "\(dimension.rawValue)-largest-read")
            }
            rows.append(BenchReport.HostileRow(dimension: dimension.rawValue, flow: dimension.flow.rawValue, atLimit: atLimit, largestRead: largestRead))
        }
        if let kept {
            try Data((commands.joined(separator: "\n") + "\n").utf8).write(to: kept.appendingPathComponent("commands.txt"))
            progress("hostile input: events, tenant and commands.txt kept in \(kept.path)")
        }
        return BenchReport.Hostile(
            maxEventBytes: options.maxEventBytes, runsPerEvent: max(1, options.runs), timeoutSeconds: options.timeoutSeconds,
            goalRatio: options.goalRatio, startup: startup, normal: normals, rows: rows)
    }

    /// The hidden `veridoc-dev bench --measure-child RESULT TIMEOUT COMMAND…`: runs
    /// `binary COMMAND…` (binary: the product) (stdout inherited), and writes what it cost to RESULT.
    ///
    /// Why a process in between: posix_spawn starts a child with vfork, and
    /// Linux carries the peak RSS of the memory a process leaves at exec into
    /// its own peak — for a vforked child, the parent's. Spawned by the bench,
    /// every child would report at least the bench's own peak. Spawned by this
    /// small, fresh process, a child reports its own.
    public static func measureChild(_ arguments: [String], binary: String) -> Int32 {
        guard arguments.count >= 3, let timeout = Double(arguments[1]) else { return 2 }
        Interruption.installHandlers()
        // The high-water mark from here on is what the child can inherit; best effort.
        if let clear = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            clear.write(Data("5".utf8))
            try? clear.close()
        }
        do {
            let usage = try spawnAndWait(binary: binary, arguments: Array(arguments.dropFirst(2)), stdout: nil, timeout: timeout)
            let line = "\(usage.cpuSeconds) \(usage.maxRSSBytes) \(usage.exitStatus ?? -1) \(usage.timedOut ? 1 : 0)\n"
            guard FileManager.default.createFile(atPath: arguments[0], contents: Data(line.utf8)) else { return 1 }
            return 0
        } catch {
            return 1
        }
    }

    /// One `veridoc verify` through `--measure-child`, stdout to `stdout`.
    static func verify(helper binary: String, arguments: [String], stdout: String, timeout: Double, scratch: URL) throws -> Usage {
        let result = scratch.appendingPathComponent("usage.txt").path
        try? FileManager.default.removeItem(atPath: result)
        // The helper enforces the time limit; this one only catches a helper that hangs.
        let helper = try spawnAndWait(binary: binary, arguments: ["bench", "--measure-child", result, String(timeout)] + arguments,
                                      stdout: stdout, timeout: timeout + 30)
        guard !helper.timedOut, helper.exitStatus == 0, let text = try? String(contentsOfFile: result, encoding: .utf8) else {
            throw Failure(description: "the measuring helper failed (exit \(helper.exitStatus.map(String.init) ?? "by a signal"))")
        }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 4, let cpu = Double(fields[0]), let rss = Int(fields[1]), let status = Int32(fields[2]), let timedOut = Int(fields[3]) else {
            throw Failure(description: "the measuring helper wrote \(text.prefix(80))")
        }
        return Usage(cpuSeconds: cpu, maxRSSBytes: rss, exitStatus: status < 0 ? nil : status, timedOut: timedOut == 1)
    }

    /// Runs `binary arguments` to its end (or kills it at `timeout`), stdout
    /// to `stdout` (inherited when nil), and reads what it cost from `wait4`.
    static func spawnAndWait(binary: String, arguments: [String], stdout: String?, timeout: Double) throws -> Usage {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let stdout { posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([binary] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, binary, &actions, nil, argv + [nil], environ) == 0 else {
            throw Failure(description: "cannot start \(binary)")
        }
        // SIGTERM lets a helper stop its own child first; a verify child has nothing to stop.
        let interruption = Interruption.register { [pid] in
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        defer { Interruption.unregister(interruption) }

        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw Failure(description: "wait4 failed: errno \(errno)") }
            if Date() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
                while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
                break
            }
            usleep(2_000)
        }
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        // WIFEXITED / WEXITSTATUS, spelled out: the macros do not import.
        let exited = status & 0x7f == 0
        // Linux reports ru_maxrss in kilobytes.
        return Usage(cpuSeconds: cpu, maxRSSBytes: usage.ru_maxrss * 1024, exitStatus: exited ? (status >> 8) & 0xff : nil, timedOut: timedOut)
    }

    static func outcome(_ usage: Usage, stdout: String) -> Outcome {
        guard !usage.timedOut, let status = usage.exitStatus, status == 0 || status == 1,
              let data = FileManager.default.contents(atPath: stdout),
              let event = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let body = event["data"] as? [String: Any], let verdict = body["verdict"] as? String
        else { return Outcome(verdict: usage.timedOut ? "timeout" : "error (exit \(usage.exitStatus.map(String.init) ?? "signal"))", reasons: []) }
        let reasons = (body["reasons"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        return Outcome(verdict: verdict, reasons: reasons)
    }

    /// RFC 3339 in whole seconds, as `veridoc verify --at` reads it.
    static func wholeSecondsRFC3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
