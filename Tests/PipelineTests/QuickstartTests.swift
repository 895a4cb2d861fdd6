import Foundation
import Testing
import TestSupport

/// docs/quickstart.md's commands, run as written by bash: the build step
/// (`make …`) left out (the tests' build is the one used), and the
/// sandbox's folder and port made the test's own (a folder of its own, a
/// free port), so that nothing else on the machine is touched.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/postgresql"), "PostgreSQL server binaries are not installed"))
struct QuickstartTests {
    /// The ```sh blocks of the document, in order.
    static func commands(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```sh" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(String(line))
            }
        }
        return blocks
    }

    @Test func theQuickstartEndsInAVerifiedOutcome() throws {
        let document = try String(contentsOf: Binaries.repository.appendingPathComponent("docs/quickstart.md"), encoding: .utf8)
        let blocks = Self.commands(in: document)
        #expect(blocks.count >= 5, "the quickstart's command blocks")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quickstart-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sandbox = folder.appendingPathComponent("sandbox").path
        var script = ["set -eu", "cd '\(folder.path)'", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
        for block in blocks {
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) where !line.hasPrefix("make ") {
                var command = String(line)
                command = command.replacingOccurrences(of: "/tmp/veridoc-sandbox", with: sandbox)
                command = command.replacingOccurrences(of: "--port 8080", with: "--port 0")
                command = command.replacingOccurrences(of: "export PATH=\"$PWD/.build/release:$PATH\"",
                                                       with: "export PATH=\"\(Binaries.veridocDev.deletingLastPathComponent().path):$PATH\"")
                script.append(command)
            }
        }
        let run = try Subprocess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script.joined(separator: "\n")], mergingStandardError: true)
        #expect(run.status == 0, "\(run.output.suffix(3000))")
        #expect(run.output.contains(#""status":"test_verified""#), "\(run.output.suffix(3000))")
        #expect(run.output.contains("Sandbox ready"), "the sandbox said where it is")
        // Stopped by the last block: the sandbox's PostgreSQL is gone with it.
        #expect(eventually(30) { !Self.postmasterRuns(on: sandbox) }, "the sandbox's PostgreSQL still runs")
    }

    static func postmasterRuns(on folder: String) -> Bool {
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.contains { pid in
            guard Int(pid) != nil, let line = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return false }
            return line.contains(folder) && line.contains("postgres")
        }
    }
}
