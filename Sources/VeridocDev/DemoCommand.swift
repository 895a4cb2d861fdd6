import CommandLineSupport
import DemoKit
import Foundation

/// `veridoc-dev demo [--events N] [--rate R] [--workers W] [--keep] [--seed S]`.
enum DemoCommand {
    static func run(_ arguments: [String]) -> Int32 {
        return ExitStatus.returning(usage: Usage.text, failure: "demo failed") {
            let parsed = try ParsedArguments(arguments, options: ["--events", "--rate", "--workers", "--seed", "--mix", "--family-name"], flags: ["--keep"])
            guard parsed.positional.isEmpty else { throw UsageError("demo takes options only") }
            var options = Demo.Options()
            if let events = parsed.options["--events"] {
                guard let count = Int(events), count > 0 else { throw UsageError("--events must be a positive number") }
                options.events = count
            }
            if let rate = parsed.options["--rate"] {
                guard let value = Double(rate), value > 0 else { throw UsageError("--rate must be a positive number of events per second") }
                options.rate = value
            }
            if let workers = parsed.options["--workers"] {
                guard let count = Int(workers), (1...256).contains(count) else { throw UsageError("--workers must be 1…256") }
                options.workers = count
            }
            if let seed = parsed.options["--seed"] {
                guard let value = UInt64(seed) else { throw UsageError("--seed must be a whole number") }
                options.seed = value
            }
            if let mix = parsed.options["--mix"] {
                guard let value = LoadGenerator.Mix.parse(mix) else { throw UsageError("--mix is realistic, valid, or kind=weight,…") }
                options.mix = value
            }
            options.familyName = parsed.options["--family-name"]
            options.keep = parsed.flags.contains("--keep")
            Interruption.installHandlers()

            let terminal = isatty(STDOUT_FILENO) == 1
            let output = LineOutput(terminal: terminal)
            let demo = Demo(options: options, print: { output.line($0) }, progress: { output.progress($0) })
            let summary = try demo.run()
            return summary.consistent ? 0 : 1
        }
    }
}

/// Lines for the log, and a progress line that rewrites itself on a terminal
/// (and appears every few seconds as a plain line otherwise).
final class LineOutput: @unchecked Sendable {
    private let terminal: Bool
    private let lock = NSLock()
    private var lastPlain = Date.distantPast
    private var showingProgress = false

    init(terminal: Bool) { self.terminal = terminal }

    func line(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        clearProgress()
        write(text + "\n")
    }

    func progress(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        if terminal {
            if text.isEmpty { clearProgress(); return }
            write("\r\u{1B}[2K" + text)
            showingProgress = true
        } else if !text.isEmpty, Date().timeIntervalSince(lastPlain) >= 2 {
            lastPlain = Date()
            write(text + "\n")
        }
    }

    private func clearProgress() {
        if showingProgress {
            write("\r\u{1B}[2K")
            showingProgress = false
        }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
