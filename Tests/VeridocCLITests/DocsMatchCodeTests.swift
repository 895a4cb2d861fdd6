import Foundation
import Testing
import TestSupport

/// README.md and docs/*.md against the code they describe: every
/// `veridoc`/`veridoc-dev` command and its `--flags` as the binaries' own
/// `--help` lists them, every exit status as that help declares it, every
/// `veridoc_…` metric as Sources/ registers it, every setting path as
/// Schemas/config.schema.json (held to the parser by SettingsTests) or the
/// Helm chart's values.yaml has it, every `VERIDOC_…` variable as the code
/// reads it, and every relative link and repository
/// path as the checkout holds it. Documents drifted from the code before
/// (a wrong exit status, a wrong build folder, files that were never there);
/// a rename now fails here instead of misleading a newcomer.
///
/// Extraction is conservative: names are read from code spans and fenced
/// blocks only (never from prose), so a word in a sentence is never taken
/// for a command.
@Suite struct DocsMatchCodeTests {
    static let documents: [Markdown] = {
        let root = Binaries.repository
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        let paths = ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return paths.compactMap { path in
            (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)).map { Markdown(path: path, text: $0) }
        }
    }()

    /// Whether a rule checked these names (a rule that read nothing passes on anything).
    static func expect(_ findings: DocsCheck.Findings, read names: [String]) {
        let missing = names.filter { !findings.checked.contains($0) }
        if !missing.isEmpty { Issue.record("not read from the documents: \(missing) (\(findings.checked.count) names read)") }
    }

    @Test func theDocumentsAreThere() {
        #expect(Self.documents.count >= 10, "README.md and docs/*.md: \(Self.documents.map(\.path))")
        #expect(Self.documents.first?.path == "README.md")
    }

    // MARK: (a) commands and (b) their flags

    @Test func everyCommandAndFlagNamedExists() throws {
        let problems = try DocsCheck.commandProblems(in: Self.documents, help: CommandHelpCache.shared)
        Self.expect(problems, read: ["veridoc verify --config --at", "veridoc-dev demo --events", "veridoc keys", "veridoc stats --config --since", "--assurance"])
        #expect(problems.problems.isEmpty, "\n\(problems.problems.joined(separator: "\n"))")
    }

    // MARK: (c) exit statuses

    @Test func everyExitStatusNamedIsTheCommands() throws {
        let problems = try DocsCheck.exitStatusProblems(in: Self.documents, help: CommandHelpCache.shared)
        Self.expect(problems, read: ["veridoc verify: [0, 1, 2, 3]", "veridoc verify: [3, 1]"])
        #expect(problems.problems.isEmpty, "\n\(problems.problems.joined(separator: "\n"))")
    }

    // MARK: (d) metrics

    @Test func everyMetricNamedIsRegistered() throws {
        let registered = try DocsCheck.registeredMetrics(in: Binaries.repository.appendingPathComponent("Sources"))
        #expect(registered.count > 20, "the registrations were found: \(registered.keys.sorted())")
        let problems = DocsCheck.metricProblems(in: Self.documents, registered: registered)
        Self.expect(problems, read: ["veridoc_events_total{verdict,reason}", "veridoc_api_requests_total", "veridoc_postgres_up"])
        #expect(problems.problems.isEmpty, "\n\(problems.problems.joined(separator: "\n"))")
    }

    // MARK: (e) settings

    @Test func everySettingNamedIsKnown() throws {
        let known = try DocsCheck.knownSettings(repository: Binaries.repository)
        #expect(known.paths.contains("replay.nonceKeyFile") && known.paths.contains("tenants[].readers"), "the schema was read")
        let problems = DocsCheck.settingProblems(in: Self.documents, known: known)
        Self.expect(problems, read: ["replay.nonceKeyFile", "kafka.offsetGapPolicy", "vicals[].graceSeconds", "serve.replicaCount"])
        #expect(problems.problems.isEmpty, "\n\(problems.problems.joined(separator: "\n"))")
        let environment = DocsCheck.environmentProblems(in: Self.documents, known: try DocsCheck.knownEnvironment(repository: Binaries.repository))
        Self.expect(environment, read: ["VERIDOC_NONCE_KEY_FILE", "VERIDOC_KAFKA_PROPERTY_SASL_PASSWORD", "VERIDOC_HTTP_PORT"])
        #expect(environment.problems.isEmpty, "\n\(environment.problems.joined(separator: "\n"))")
    }

    // MARK: (f) links and repository paths

    @Test func everyLinkAndRepositoryPathExists() {
        let problems = DocsCheck.pathProblems(in: Self.documents, repository: Binaries.repository)
        Self.expect(problems, read: ["docs/operations.md", "session-api.md#http-front-limits-and-why", "Sources/Storage/Migrations.swift", "deploy/grafana/veridoc-dashboard.json"])
        #expect(problems.problems.isEmpty, "\n\(problems.problems.joined(separator: "\n"))")
    }

    /// The README's map of the rooms names every module under Sources/.
    @Test func theReadmeMapsEveryModule() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Binaries.repository.appendingPathComponent("Sources").path)
        let readme = try #require(Self.documents.first { $0.path == "README.md" })
        let lines = readme.text.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let missing = modules.filter { module in !lines.contains { $0.contains("`\(module)`") } }.sorted()
        #expect(missing.isEmpty, "modules missing from the README's map: \(missing)")
        #expect(readme.text.split(separator: "\n", omittingEmptySubsequences: false).count <= 250, "the README stays short")
    }

    // MARK: each rule fails on a bad name

    /// The checks above pass on the real documents; each must also find what
    /// it is for, or a broken extraction would pass on anything.
    @Test func eachRuleFindsABadName() throws {
        let help = CommandHelpCache.shared
        func document(_ text: String) -> [Markdown] { [Markdown(path: "docs/probe.md", text: text)] }

        #expect(try DocsCheck.commandProblems(in: document("Run `veridoc verify --config c.json e.json`.\n"), help: help).isEmpty)
        #expect(try DocsCheck.commandProblems(in: document("Run `veridoc verfy --config c.json`.\n"), help: help).count == 1)
        #expect(try DocsCheck.commandProblems(in: document("```sh\nveridoc-dev demo --events 5 --colour\n```\n"), help: help).count == 1)
        #expect(try DocsCheck.commandProblems(in: document("`veridoc keys rotate --config c.json`\n"), help: help).count == 1)
        #expect(try DocsCheck.commandProblems(in: document("`veridoc stats` takes `--snce 7d`.\n"), help: help).count == 1)

        #expect(try DocsCheck.exitStatusProblems(in: document("## `veridoc verify`\n\nExit status: 0 verified, 1 rejected, 2 usage or configuration error, 3 test_verified.\n"), help: help).isEmpty)
        #expect(try DocsCheck.exitStatusProblems(in: document("## `veridoc verify`\n\nExit status: 0 verified, 1 rejected, 2 usage or configuration error.\n"), help: help).count == 1)
        #expect(try DocsCheck.exitStatusProblems(in: document("`veridoc run` exits 4 when it drained.\n"), help: help).count == 1)
        #expect(try DocsCheck.exitStatusProblems(in: document("A failure makes it exit 7.\n"), help: help).count == 1)
        #expect(try DocsCheck.exitStatusProblems(in: document("`veridoc verify` exits 1 for verified.\n"), help: help).count == 1)

        let registered = try DocsCheck.registeredMetrics(in: Binaries.repository.appendingPathComponent("Sources"))
        #expect(DocsCheck.metricProblems(in: document("`veridoc_events_total{verdict,reason}`\n"), registered: registered).isEmpty)
        #expect(DocsCheck.metricProblems(in: document("`veridoc_events_stored_total`\n"), registered: registered).count == 1)
        #expect(DocsCheck.metricProblems(in: document("`veridoc_events_total{tenant}`\n"), registered: registered).count == 1)

        let known = try DocsCheck.knownSettings(repository: Binaries.repository)
        #expect(DocsCheck.settingProblems(in: document("`replay.nonceKeyFile`, `tenants[].readers`, `vicals[].graceSeconds`\n"), known: known).isEmpty)
        #expect(DocsCheck.settingProblems(in: document("`replay.nonceKeyPath`\n"), known: known).count == 1)
        #expect(DocsCheck.settingProblems(in: document("`tenants[].readerz`\n"), known: known).count == 1)
        let environment = try DocsCheck.knownEnvironment(repository: Binaries.repository)
        #expect(DocsCheck.environmentProblems(in: document("`VERIDOC_WORKERS`, `VERIDOC_KAFKA_PROPERTY_SASL_USERNAME`, `$VERIDOC_API_KEY`\n"), known: environment).isEmpty)
        #expect(DocsCheck.environmentProblems(in: document("`VERIDOC_WORKER_THREADS`\n"), known: environment).count == 1)

        let repository = Binaries.repository
        #expect(DocsCheck.pathProblems(in: document("[ops](operations.md#operating-notes), `Sources/Storage/Migrations.swift`\n"), repository: repository).isEmpty)
        #expect(DocsCheck.pathProblems(in: document("[ops](operation.md)\n"), repository: repository).count == 1)
        #expect(DocsCheck.pathProblems(in: document("[ops](operations.md#no-such-heading)\n"), repository: repository).count == 1)
        #expect(DocsCheck.pathProblems(in: document("`Sources/Storage/Migration.swift`\n"), repository: repository).count == 1)
    }
}

/// Each command's `--help`, asked once per run of the suite.
final class CommandHelpCache: @unchecked Sendable {
    static let shared = CommandHelpCache()
    private let lock = NSLock()
    private var texts: [String: String] = [:]

    /// `binary command --help`'s text, nil when the binary does not know the command.
    func help(_ binary: String, _ command: String) throws -> String? {
        let key = binary + " " + command
        lock.lock()
        if let text = texts[key] { lock.unlock(); return text.isEmpty ? nil : text }
        lock.unlock()
        let url = binary == "veridoc" ? Binaries.veridoc : Binaries.veridocDev
        let run = try Subprocess.run(url, [command, "--help"])
        let text = run.status == 0 && run.output.hasPrefix("usage: \(binary) \(command)") ? run.output : ""
        lock.lock()
        texts[key] = text
        lock.unlock()
        return text.isEmpty ? nil : text
    }
}
