/// One command's part of a binary's usage text: its entries (a command such
/// as `keys` has one per subcommand) with their explanation lines, as the
/// text lists them, so the whole list and each command's `--help` never
/// disagree.
public struct CommandUsage: Sendable {
    /// `usage: veridoc` (the first line's words before `<command>`).
    public let binary: String
    /// The command's lines of the usage text, as written.
    public let lines: [String]

    /// The command's entries in `usage`: each line that starts, after the
    /// two-space indent, with `name` and a space (or ends there), and the
    /// more deeply indented lines that follow it.
    public init(_ name: String, in usage: String) {
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

    /// What `<command> --help` prints.
    public var help: String {
        synopsis + "\n\n" + lines.joined(separator: "\n")
    }
}

/// The usage of the command this process runs, set once by `CommandTable`
/// before the command starts (and before any thread does), read when a usage
/// error is reported.
public enum CurrentCommand {
    nonisolated(unsafe) public static var usage: CommandUsage?
}
