import Foundation

/// A binary's commands by name: `main` runs the one named by the first
/// argument with the rest, prints the usage for `help` (exit 0) or no
/// command (exit 2), and refuses an unknown one (exit 2).
public struct CommandTable {
    public typealias Command = ([String]) -> Int32

    let usage: String
    let commands: [String: Command]

    public init(usage: String, commands: [String: Command]) {
        self.usage = usage
        self.commands = commands
    }

    public func main(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        let status: Int32
        switch arguments.first {
        case "help", "--help", "-h", nil:
            print(usage)
            status = arguments.isEmpty ? 2 : 0
        case let name?:
            if let command = commands[name] {
                status = command(Array(arguments.dropFirst()))
            } else {
                Console.error("unknown command \(name)\n\n\(usage)")
                status = 2
            }
        }
        exit(status)
    }
}
