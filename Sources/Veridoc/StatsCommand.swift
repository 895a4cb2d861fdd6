import CommandLineSupport
import Foundation
import Retention
import Storage

/// `veridoc stats --config FILE [--since DURATION] [--tenant T]`: outcome
/// counts, reasons and latency as text tables (small counts as "<5").
enum StatsCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let (file, since, tenant) = try options(arguments, extra: [])
            let connection = try RetentionCommands.connect(file)
            defer { connection.close() }
            print(StatsTable.render(try AnalyticsSnapshot.load(since: since, tenant: tenant, on: connection)), terminator: "")
        }
    }

    /// `--config`, `--since` (default 24h) and `--tenant`, shared with `report`.
    static func options(_ arguments: [String], extra: Set<String>) throws -> (URL, Date, String?) {
        let parsed = try ParsedArguments(arguments, options: Set(["--config", "--since", "--tenant"]).union(extra), flags: [])
        let file = try RetentionCommands.configFile(parsed)
        let text = parsed.options["--since"] ?? "24h"
        guard let duration = parseDuration(text) else { throw UsageError("--since takes a duration such as 90m, 24h or 7d") }
        return (file, Date().addingTimeInterval(-duration), parsed.options["--tenant"])
    }
}
