import Foundation

/// A binary's commands by name: `main` runs the one named by the first
/// argument with the rest, prints the usage for `help` (exit 0) or no
/// command (exit 2), and refuses an unknown one (exit 2). `<command> --help`
/// (or `-h`, anywhere after it) prints that command's part of the usage and
/// exits 0 without running it; `--version` prints the version and the
/// linked libraries'.
public struct CommandTable {
    public typealias Command = ([String]) -> Int32

    let usage: String
    let commands: [String: Command]
    let details: [String: CommandDetails]
    let version: () -> String

    /// `details`: each command's options and example, added to its `--help`.
    public init(usage: String, commands: [String: Command], details: [String: CommandDetails] = [:], version: @escaping () -> String = { "" }) {
        self.usage = usage
        self.commands = commands
        self.details = details
        self.version = version
    }

    public func main(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        let status: Int32
        switch arguments.first {
        case "help", "--help", "-h", nil:
            print(usage)
            status = arguments.isEmpty ? 2 : 0
        case "--version", "version":
            print(version())
            status = 0
        case let name?:
            if let command = commands[name] {
                let usage = CommandUsage(name, in: self.usage, details: details[name])
                CurrentCommand.usage = usage
                if arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
                    print(usage.help)
                    status = 0
                } else {
                    status = command(Array(arguments.dropFirst()))
                }
            } else {
                Console.error("unknown command \(name)\n\n\(usage)")
                status = 2
            }
        }
        exitAfterFlushing(status)
    }
}
