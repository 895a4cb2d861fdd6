/// A usage problem: printed with the command's synopsis, exit status 2.
public struct UsageError: Error {
    public let message: String
    public init(_ message: String) { self.message = message }

    /// The message, then the running command's synopsis and where its help
    /// is (`usage` when no command is known, e.g. in tests).
    public func report(otherwise usage: String) -> String {
        guard let command = CurrentCommand.usage, !command.lines.isEmpty else { return "\(message)\n\n\(usage)" }
        let name = command.lines.first?.dropFirst(2).split(separator: " ").first.map(String.init) ?? ""
        return "\(message)\n\n\(command.synopsis)\n(\(command.binary) \(name) --help for its options)"
    }
}
