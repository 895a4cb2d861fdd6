import Foundation
import Testing
import TestSupport

/// `<command> --help` and `-h` for every command of both binaries: that
/// command's usage on stdout, exit 0, nothing run and nothing written (a
/// `--help` once became a folder of keys); a usage error shows the
/// command's synopsis, not the whole list; nothing spelt like an option is
/// taken as a path; `--version` names the linked libraries.
@Suite struct CommandHelpTests {
    static let product = ["run", "migrate", "serve", "verify", "keys", "purge", "forget", "stats", "report", "webhooks"]
    static let developer = ["demo", "bench", "loadgen", "chaos", "dev-broker", "examples", "sandbox", "wallet"]

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

    /// Each command's help says what it does (its lines of the usage list),
    /// every option on a line of its own with what it means, every exit
    /// status, and an example that runs that command.
    @Test func everyCommandsHelpHasItsOptionsExitStatusesAndAnExample() throws {
        for (binary, names, prefix) in [(Binaries.veridoc, Self.product, "veridoc"), (Binaries.veridocDev, Self.developer, "veridoc-dev")] {
            for name in names {
                let run = try CLI.run([name, "--help"], binary: binary)
                #expect(run.status == 0)
                let help = run.stdout
                let sections = help.components(separatedBy: "\n\n")
                func section(_ title: String) -> [String] {
                    sections.first { $0.hasPrefix(title + "\n") }.map { $0.split(separator: "\n").dropFirst().map(String.init) } ?? []
                }
                let description = sections.dropFirst().first?.split(separator: "\n").map(String.init) ?? []
                #expect(description.first?.hasPrefix("  \(name)") == true && description.joined().count > 40, "\(prefix) \(name) says what it does: \(help)")
                let options = section("Options:")
                #expect(!options.isEmpty, "\(prefix) \(name) lists its options: \(help)")
                for line in options {
                    let parts = line.dropFirst(2).components(separatedBy: "   ").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    #expect(line.hasPrefix("  ") && parts.count >= 2 && parts.last!.count > 10, "\(prefix) \(name): one option, one line saying what it does: \(line)")
                }
                // Every option the synopsis shows is explained.
                let synopsis = help.split(separator: "\n").filter { $0.hasPrefix("usage: ") }.joined(separator: " ")
                for flag in Set(DocsCheck.matches(#"(--[a-z][a-z0-9-]*)"#, in: synopsis).map { $0[1] }) {
                    #expect(options.contains { $0.hasPrefix("  \(flag)") }, "\(prefix) \(name): \(flag) is in the synopsis but not under Options")
                }
                let statuses = section("Exit status:")
                #expect(statuses.contains { $0.hasPrefix("  0 ") } && statuses.contains { $0.hasPrefix("  2 ") }, "\(prefix) \(name): exit statuses: \(help)")
                let examples = section("Example:") + section("Examples:")
                #expect(!examples.isEmpty && examples.allSatisfy { $0.hasPrefix("  \(prefix) \(name)") }, "\(prefix) \(name): an example that runs it: \(help)")
            }
        }
    }

    /// Every option a command's source accepts (a `"--name"` literal in
    /// Sources/Veridoc or Sources/VeridocDev) is in some command's help of
    /// that binary: an option added to a parser without a line in the help fails here.
    @Test func everyOptionTheCodeAcceptsIsInAHelp() throws {
        for (binary, names, prefix, folder) in [(Binaries.veridoc, Self.product, "veridoc", "Sources/Veridoc"),
                                                (Binaries.veridocDev, Self.developer, "veridoc-dev", "Sources/VeridocDev")] {
            let helps = try names.map { try CLI.run([$0, "--help"], binary: binary).stdout }.joined(separator: "\n")
            let directory = Binaries.repository.appendingPathComponent(folder)
            var literals: Set<String> = []
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                literals.formUnion(DocsCheck.matches(#""(--[a-z][a-z0-9-]*)""#, in: text).map { $0[1] })
            }
            #expect(literals.count > 5, "\(folder): the options were found")
            for flag in literals.sorted() where flag != "--help" && flag != "--version" {
                #expect(DocsCheck.mentions(helps, flag), "\(prefix): \(flag) is accepted but no command's --help explains it")
            }
        }
    }

    /// The tooling claims the product's version, never one of its own.
    @Test func theToolingPrintsTheProductsVersion() throws {
        let product = try CLI.run(["--version"])
        let tooling = try CLI.dev(["--version"])
        #expect(tooling.status == 0)
        let version = product.stdout.split(separator: "\n").first?.split(separator: " ").last.map(String.init)
        #expect(version != nil && version != "")
        #expect(tooling.stdout.split(separator: "\n").first.map(String.init) == "veridoc-dev \(version ?? "?")", "\(tooling.stdout)")
        #expect(tooling.stdout.contains("  librdkafka 2."), "\(tooling.stdout)")
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
