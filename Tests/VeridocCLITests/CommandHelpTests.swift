import Foundation
import Testing
import TestSupport

/// `<command> --help` and `-h` for every command of both binaries: that
/// command's usage on stdout, exit 0, nothing run and nothing written (a
/// `--help` once became a folder of keys); a usage error shows the
/// command's synopsis, not the whole list; nothing spelt like an option is
/// taken as a path; `--version` names the linked libraries.
@Suite struct CommandHelpTests {
    static let product = ["run", "migrate", "serve", "verify", "keys", "purge", "forget", "stats", "report"]
    static let developer = ["demo", "bench", "loadgen", "chaos", "dev-broker", "examples"]

    @Test func everyCommandHasItsOwnHelp() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (binary, names, prefix) in [(Binaries.veridoc, Self.product, "veridoc"), (Binaries.veridocDev, Self.developer, "veridoc-dev")] {
            for name in names {
                for flag in ["--help", "-h"] {
                    for arguments in [[name, flag], [name, "generate", flag], [name, "--config", "x.json", flag]] {
                        let run = try CLI.run(arguments, binary: binary, directory: directory)
                        #expect(run.status == 0, "\(prefix) \(arguments): \(run.stderr)")
                        #expect(run.stdout.hasPrefix("usage: \(prefix) \(name)"), "\(prefix) \(arguments): \(run.stdout)")
                        let otherCommands = names.filter { $0 != name && !name.hasPrefix($0) && !$0.hasPrefix(name) }
                        #expect(!otherCommands.contains { run.stdout.contains("\n  \($0) ") }, "only \(name)'s part: \(run.stdout)")
                    }
                }
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "no --help wrote anything")
    }

    @Test func nothingSpeltLikeAnOptionIsAPath() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for arguments in [["keys", "generate", "-x"], ["keys", "generate-data-key", "--key"], ["keys", "hash", "-v"], ["verify", "--config", "-c", "e.json"],
                          ["verify", "--config", "c.json", "-q"], ["stats", "--config", "--since"]] {
            let run = try CLI.run(arguments, directory: directory)
            #expect(run.status == 2, "\(arguments): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.contains("unknown option") || run.stderr.contains("needs a value"), "\(arguments): \(run.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aUsageErrorShowsTheCommandsSynopsis() throws {
        let run = try CLI.run(["stats", "--bogus"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("unknown option --bogus"))
        #expect(run.stderr.contains("usage: veridoc stats --config FILE"))
        #expect(!run.stderr.contains("verify --config"), "not the whole list: \(run.stderr)")
        #expect(run.stderr.contains("veridoc stats --help"))
    }

    @Test func theVersionNamesTheLinkedLibraries() throws {
        let run = try CLI.run(["--version"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let chart = try String(contentsOf: Binaries.repository.appendingPathComponent("Helm/veridoc/Chart.yaml"), encoding: .utf8)
        let appVersion = chart.split(separator: "\n").first { $0.hasPrefix("appVersion:") }?.split(separator: "\"").dropFirst().first.map(String.init)
        #expect(lines.first == "veridoc \(appVersion ?? "?")", "the binary and the chart's appVersion agree")
        for library in ["OpenSSL 3.", "librdkafka 2.", "libpq ", "libmicrohttpd "] {
            #expect(lines.contains { $0.hasPrefix("  " + library) }, "\(library): \(run.stdout)")
        }
    }
}
