/// One command's part of a binary's usage text: its entries (a command such
/// as `keys` has one per subcommand) with their explanation lines, as the
/// text lists them, so the whole list and each command's `--help` never
/// disagree.
public struct CommandUsage: Sendable {
    /// `usage: veridoc` (the first line's words before `<command>`).
    public let binary: String
    /// The command's lines of the usage text, as written.
    public let lines: [String]
    /// Its options, one line each, and an example (none when the binary gave none).
    public let details: CommandDetails?

    /// The command's entries in `usage`: each line that starts, after the
    /// two-space indent, with `name` and a space (or ends there), and the
    /// more deeply indented lines that follow it.
    public init(_ name: String, in usage: String, details: CommandDetails? = nil) {
        self.details = details
        let all = usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        binary = all.first.flatMap { line in line.split(separator: " ").dropFirst().first.map(String.init) } ?? name
        var picked: [String] = []
        var inside = false
        for line in all {
            let isEntry = line.hasPrefix("  ") && !line.hasPrefix("   ")
            if isEntry {
                let words = line.dropFirst(2).split(separator: " ", maxSplits: 1)
                inside = words.first.map(String.init) == name
            } else if !line.hasPrefix("   ") {
                inside = false
            }
            if inside { picked.append(line) }
        }
        lines = picked
    }

    /// The entries alone, without their explanations: what a usage error shows.
    public var synopsis: String {
        lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.map { line in
            var entry = String(line.dropFirst(2))
            // An entry's explanation may share its line, after a gap of three spaces or more.
            if let gap = entry.range(of: "   ") { entry = String(entry[..<gap.lowerBound]) }
            return "usage: \(binary) \(entry)"
        }.joined(separator: "\n")
    }

    /// What `<command> --help` prints: the synopsis, what the command does
    /// (its lines of the usage text), then each option on a line of its own
    /// and an example.
    public var help: String {
        var text = synopsis + "\n\n" + lines.joined(separator: "\n")
        guard let details else { return text }
        if !details.options.isEmpty {
            let width = details.options.map(\.spelling.count).max() ?? 0
            text += "\n\nOptions:\n" + details.options.map { option in
                "  " + option.spelling.padding(toLength: width, withPad: " ", startingAt: 0) + "   " + option.meaning
            }.joined(separator: "\n")
        }
        if !details.exitStatuses.isEmpty {
            text += "\n\nExit status:\n" + details.exitStatuses.map { "  \($0.status)   \($0.meaning)" }.joined(separator: "\n")
        }
        if !details.examples.isEmpty {
            text += "\n\nExample\(details.examples.count == 1 ? "" : "s"):\n" + details.examples.map { "  " + $0 }.joined(separator: "\n")
        }
        return text
    }
}

/// What a command's `--help` says beyond its lines of the usage text: every
/// option it accepts, one line each, and at least one invocation to copy.
/// The usage list stays short; this is where a newcomer learns what
/// `--mix` or `--since` takes without reading the source.
public struct CommandDetails: Sendable {
    public struct Option: Sendable {
        /// `--since DURATION`, `--json`, `DIR`: the option as typed, with its value's name.
        public let spelling: String
        public let meaning: String

        public init(_ spelling: String, _ meaning: String) {
            self.spelling = spelling
            self.meaning = meaning
        }

        /// `--since` of `--since DURATION` (nil for a positional argument such as `DIR`).
        public var flag: String? {
            guard spelling.hasPrefix("--") else { return nil }
            return spelling.split(separator: " ").first.map(String.init)
        }
    }

    public let options: [Option]
    /// Every status the command exits with and what it means (`ExitStatus`
    /// maps errors to 1 and 2; a command may add its own, as verify's 3).
    public let exitStatuses: [(status: Int32, meaning: String)]
    public let examples: [String]

    public init(options: [Option], exitStatuses: [(status: Int32, meaning: String)], examples: [String]) {
        self.options = options
        self.exitStatuses = exitStatuses
        self.examples = examples
    }
}

/// The usage of the command this process runs, set once by `CommandTable`
/// before the command starts (and before any thread does), read when a usage
/// error is reported.
public enum CurrentCommand {
    nonisolated(unsafe) public static var usage: CommandUsage?
}
