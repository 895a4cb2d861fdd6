import Foundation

/// What a command prints besides its report: errors and progress, both on
/// stderr, so stdout keeps only the report.
public enum Console {
    /// `veridoc` or `veridoc-dev`: the name the messages start with.
    public static let programName = URL(fileURLWithPath: CommandLine.arguments.first ?? "veridoc").lastPathComponent

    public static func error(_ message: String) {
        FileHandle.standardError.write(Data((programName + ": " + message + "\n").utf8))
    }

    /// A progress note (empty text: nothing).
    public static func progress(_ message: String) {
        guard !message.isEmpty else { return }
        FileHandle.standardError.write(Data(("… " + message + "\n").utf8))
    }
}
