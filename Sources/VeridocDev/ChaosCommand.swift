import CommandLineSupport
import Chaos
import DemoKit
import Foundation

/// `veridoc-dev chaos [--duration S] [--events N] [--faults N] [--seed S] [--workers W] [--broker mock|tansu] [--no-broker-restarts] [--output FILE] [--repository DIR] [--keep]`:
/// the fault-injection harness (see chaos/README.md). Exit 0 when no invariant is violated, 1 otherwise.
enum ChaosCommand {
    static func run(_ arguments: [String]) -> Int32 {
        return ExitStatus.returning(usage: Usage.text, failure: "chaos") {
            let parsed = try ParsedArguments(arguments, options: ["--duration", "--events", "--faults", "--seed", "--workers", "--broker", "--output", "--repository"],
                                             flags: ["--keep", "--no-broker-restarts"])
            guard parsed.positional.isEmpty else { throw UsageError("chaos takes options only") }
            let binary = Binaries.tooling
            let repository = parsed.options["--repository"].map { URL(fileURLWithPath: $0) } ?? findRepository(from: binary)
            var options = ChaosOptions(worker: try Binaries.product(), tooling: binary, repository: repository)
            if let value = parsed.options["--duration"] {
                guard let seconds = Double(value), seconds >= 5 else { throw UsageError("--duration must be at least 5 seconds") }
                options.duration = seconds
            }
            if let value = parsed.options["--events"] {
                guard let count = Int(value), count > 0 else { throw UsageError("--events must be a positive number") }
                options.events = count
            }
            if let value = parsed.options["--faults"] {
                guard let count = Int(value), count >= 0 else { throw UsageError("--faults must be a number") }
                options.faults = count
            }
            if let value = parsed.options["--seed"] {
                guard let seed = UInt64(value) else { throw UsageError("--seed must be a whole number") }
                options.seed = seed
            }
            if let value = parsed.options["--workers"] {
                guard let count = Int(value), (1...16).contains(count) else { throw UsageError("--workers must be 1…16") }
                options.workers = count
            }
            if let value = parsed.options["--broker"] {
                guard let kind = BrokerKind(rawValue: value) else { throw UsageError("--broker must be mock or tansu") }
                options.broker = kind
            }
            options.output = parsed.options["--output"].map { URL(fileURLWithPath: $0) }
            options.keep = parsed.flags.contains("--keep")
            options.brokerRestarts = !parsed.flags.contains("--no-broker-restarts")
            // SIGINT/SIGTERM stop every process the run started (ChaosHarness registers them).
            Interruption.installHandlers()
            let summary = try ChaosHarness(options: options, log: { FileHandle.standardError.write(Data(("chaos: " + $0 + "\n").utf8)) }).run()
            print(summary.text)
            return summary.violations == 0 ? 0 : 1
        }
    }

    /// The checkout holding scripts/test-postgres: the current folder, or up from the binary (.build/debug/veridoc-dev).
    private static func findRepository(from binary: URL) -> URL {
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        var folder = binary.deletingLastPathComponent()
        while folder.path != "/" {
            candidates.append(folder)
            folder.deleteLastPathComponent()
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("scripts/test-postgres").path) } ?? candidates[0]
    }
}
