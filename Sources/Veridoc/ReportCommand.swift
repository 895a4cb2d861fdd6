import CommandLineSupport
import Foundation
import Analytics
import Storage

/// `veridoc report --config FILE --html OUT [--since DURATION] [--tenant T] [--assurance production|test|all] [--per hour|day|week]`:
/// a self-contained HTML page with inline SVG charts.
enum ReportCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let parsed = try ParsedArguments(arguments, options: ["--config", "--since", "--tenant", "--assurance", "--html", "--per"], flags: [])
            guard let output = parsed.options["--html"] else { throw UsageError("report needs --html FILE") }
            let binning = try parsed.options["--per"].map { name throws(UsageError) -> ReportTimeline.Binning in
                guard let binning = ReportTimeline.Binning(rawValue: name) else { throw UsageError("--per is hour, day or week") }
                return binning
            }
            let (deployment, since, tenant, assurance) = try StatsCommand.options(arguments.filterOption("--html").filterOption("--per"), extra: [])
            let connection = try RetentionCommands.connect(deployment)
            defer { connection.close() }
            let html = ReportHTML.render(try AnalyticsSnapshot.load(since: since, tenant: tenant, assurance: assurance, on: connection), binning: binning)
            try Data(html.utf8).write(to: URL(fileURLWithPath: output))
            print("report written to \(output)")
        }
    }
}

extension Array where Element == String {
    /// The arguments without `name` and its value.
    func filterOption(_ name: String) -> [String] {
        var out: [String] = []
        var skip = false
        for argument in self {
            if skip { skip = false; continue }
            if argument == name { skip = true; continue }
            out.append(argument)
        }
        return out
    }
}
