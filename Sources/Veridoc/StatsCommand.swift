import CommandLineSupport
import Deployment
import Foundation
import Analytics
import Settings
import Storage

/// `veridoc stats --config FILE [--since DURATION] [--tenant T] [--assurance production|test|all]`: outcome
/// counts, reasons and latency as text tables (small counts as "<5").
enum StatsCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let (deployment, since, tenant, assurance) = try options(arguments, extra: [])
            let connection = try RetentionCommands.connect(deployment)
            defer { connection.close() }
            print(StatsTable.render(try AnalyticsSnapshot.load(since: since, tenant: tenant, assurance: assurance, on: connection)), terminator: "")
        }
    }

    /// `--config`, `--since` (default 24h), `--tenant` and `--assurance`
    /// (production, the default; test; all), shared with `report`.
    static func options(_ arguments: [String], extra: Set<String>) throws -> (Deployment, Date, String?, AnalyticsSnapshot.AssuranceScope) {
        let parsed = try ParsedArguments(arguments, options: Set(["--config", "--since", "--tenant", "--assurance"]).union(extra), flags: [])
        let assurance = try parsed.options["--assurance"].map { text throws(UsageError) -> AnalyticsSnapshot.AssuranceScope in
            guard let scope = AnalyticsSnapshot.AssuranceScope(rawValue: text) else { throw UsageError("--assurance takes production, test or all") }
            return scope
        } ?? .production
        let deployment = try ConfigFile.read(parsed)
        let text = parsed.options["--since"] ?? "24h"
        guard let duration = ParsedArguments.duration(text) else { throw UsageError("--since takes a duration such as 90m, 24h or 7d") }
        return (deployment, Date().addingTimeInterval(-duration), parsed.options["--tenant"], assurance)
    }
}
