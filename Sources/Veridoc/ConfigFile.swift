import CommandLineSupport
import Deployment
import Foundation
import Settings

enum ConfigFile {
    /// Where every command with `--config FILE` starts: the deployment, made
    /// once for the process from the file read strictly and whole, with every
    /// key, certificate and trust list it names loaded (`Deployment`).
    static func read(_ parsed: ParsedArguments, at time: Date = Date()) throws -> Deployment {
        guard let path = parsed.options["--config"], parsed.positional.isEmpty else { throw UsageError("--config FILE is required") }
        return try Deployment.load(from: URL(fileURLWithPath: path), at: time)
    }
}
