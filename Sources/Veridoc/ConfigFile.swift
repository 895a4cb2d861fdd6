import CommandLineSupport
import Foundation
import Settings

enum ConfigFile {
    /// Where every command with `--config FILE` starts: the file read once
    /// for the process, strictly and whole, into typed settings (each
    /// enumeration already an enum); what a command loads from it (tenants,
    /// keys, its own sections) it loads from this value.
    static func read(_ parsed: ParsedArguments) throws -> VeridocSettings {
        guard let path = parsed.options["--config"], parsed.positional.isEmpty else { throw UsageError("--config FILE is required") }
        return try VeridocSettings.load(from: URL(fileURLWithPath: path))
    }
}
