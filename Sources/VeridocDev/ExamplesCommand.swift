import CommandLineSupport
import DemoKit
import Foundation
import MDoc

/// `veridoc-dev examples DIR [--at RFC3339]`: `ExampleFolder`, and the
/// commands that verify it; with `--schema-examples`, `SchemaExamples`.
enum ExamplesCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.returning(usage: Usage.text, failure: "examples failed") {
            let parsed = try ParsedArguments(arguments, options: ["--at"], flags: ["--schema-examples"])
            guard parsed.positional.count == 1 else { throw UsageError("exactly one DIR is required") }
            var at = Date()
            if let text = parsed.options["--at"] {
                guard let date = RFC3339.date(from: text) else { throw UsageError("--at is not an RFC 3339 date-time") }
                at = date
            }
            if parsed.flags.contains("--schema-examples") {
                let directory = URL(fileURLWithPath: parsed.positional[0])
                try SchemaExamples.write(to: directory, at: at)
                print("Schema examples and their tenant written to \(directory.path) (made for \(RFC3339.string(from: at))).")
                return 0
            }
            let folder = try ExampleFolder.write(to: URL(fileURLWithPath: parsed.positional[0]), at: at)
            let path = folder.directory.path
            print("Example tenant, keys and events in \(path) (made for \(RFC3339.string(from: folder.at)), also in \(path)/AT).")
            print("Verify one:")
            print("  veridoc verify --config \(path)/config.json --at \(RFC3339.string(from: folder.at)) \(path)/\(ExampleFolder.events[0].name)")
            print("All of them:")
            print("  for e in \(path)/*.json; do [ \"$e\" = \(path)/config.json ] || veridoc verify --config \(path)/config.json --at $(cat \(path)/AT) \"$e\"; done")
            return 0
        }
    }
}
