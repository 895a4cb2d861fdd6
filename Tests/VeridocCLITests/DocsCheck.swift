import Foundation
import Verification

/// A Markdown file cut into what DocsCheck reads: paragraphs (a list item
/// or a table row is one of its own), each with the heading it is under,
/// and fenced blocks with their language.
struct Markdown {
    struct Block {
        var heading: String
        var text: String
        var fenced: Bool
        var language: String
        var line: Int
    }

    let path: String
    let text: String
    let blocks: [Block]
    /// The anchors GitHub makes of the headings.
    let anchors: Set<String>

    init(path: String, text: String) {
        self.path = path
        self.text = text
        var blocks: [Block] = []
        var anchors: Set<String> = []
        var heading = ""
        var current: Block?
        var fence: String?
        func close() {
            if let block = current, !block.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { blocks.append(block) }
            current = nil
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if trimmed.hasPrefix(open) {
                    close()
                    fence = nil
                } else {
                    current?.text += line + "\n"
                }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                close()
                fence = String(trimmed.prefix(3))
                current = Block(heading: heading, text: "", fenced: true, language: String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), line: index + 1)
                continue
            }
            if trimmed.hasPrefix("#") {
                close()
                heading = trimmed.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
                anchors.insert(Self.anchor(heading))
                blocks.append(Block(heading: heading, text: heading, fenced: false, language: "", line: index + 1))
                continue
            }
            if trimmed.isEmpty {
                close()
                continue
            }
            let startsItem = trimmed.hasPrefix("- ") || trimmed.hasPrefix("* ") || trimmed.hasPrefix("|")
                || trimmed.range(of: #"^\d+\. "#, options: .regularExpression) != nil
            if startsItem { close() }
            if current == nil { current = Block(heading: heading, text: "", fenced: false, language: "", line: index + 1) }
            current?.text += line + "\n"
        }
        close()
        self.blocks = blocks
        self.anchors = anchors
    }

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().unicodeScalars.filter { scalar in
            CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == " " || scalar == "_"
        }.map(Character.init)).replacingOccurrences(of: " ", with: "-")
    }

    /// The code spans of a paragraph's text (fenced blocks have none).
    static func codeSpans(_ text: String) -> [String] {
        DocsCheck.matches(#"`([^`\n]+)`"#, in: text).map { $0[1] }
    }
}

/// The rules of DocsMatchCodeTests, each returning one line per problem
/// (`file:line: what`), so a test can also feed them a bad name.
enum DocsCheck {
    /// What a rule found wrong, and what it checked (so a test can tell a
    /// rule that passes from one that read nothing).
    struct Findings {
        var problems: [String] = []
        var checked: [String] = []
        mutating func fail(_ problem: String) { problems.append(problem) }
        var count: Int { problems.count }
        var isEmpty: Bool { problems.isEmpty }
    }

    // MARK: commands and flags

    struct Invocation {
        let binary: String
        let command: String
        /// The words after the command, up to a comment or the end of the command.
        let arguments: [String]
    }

    /// The commands invoked in a code span or a line of a shell block:
    /// `veridoc verify --config …`, `.build/release/veridoc-dev demo`.
    static func invocations(in text: String) -> [Invocation] {
        var found: [Invocation] = []
        let pattern = #"(?:^|(?<=[\s(`"'/$]))(veridoc(?:-dev)?) ([a-z][a-z-]*)([^\n]*)"#
        for match in matches(pattern, in: text) {
            var arguments: [String] = []
            for word in match[3].split(separator: " ").map(String.init) {
                if word.hasPrefix("#") || ["|", ";", "&&", ">", "2>", "<"].contains(word) || word.hasPrefix("`") { break }
                arguments.append(word)
            }
            found.append(Invocation(binary: match[1], command: match[2], arguments: arguments))
        }
        return found
    }

    /// The texts in which commands are named: code spans, and the lines of
    /// fenced blocks that hold shell or console text (continuations joined).
    static func commandTexts(of block: Markdown.Block) -> [String] {
        if block.fenced {
            guard ["", "sh", "bash", "console", "shell", "text"].contains(block.language) else { return [] }
            return block.text.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n").map(String.init)
        }
        return Markdown.codeSpans(block.text)
    }

    /// What every command answers (CommandTable), listed in no help.
    static let universal: Set<String> = ["--help", "--version"]

    static func commandProblems(in documents: [Markdown], help: CommandHelpCache) throws -> Findings {
        var problems = Findings()
        for document in documents {
            for block in document.blocks {
                var named: [Invocation] = []
                for text in commandTexts(of: block) {
                    for invocation in invocations(in: text) {
                        let at = "\(document.path):\(block.line): \(invocation.binary) \(invocation.command)"
                        guard let text = try help.help(invocation.binary, invocation.command) else {
                            problems.fail("\(at): no such command (\(invocation.binary) --help lists its commands)")
                            continue
                        }
                        named.append(invocation)
                        problems.checked.append("\(invocation.binary) \(invocation.command)" + invocation.arguments.compactMap(flagName).map { " " + $0 }.joined())
                        let subcommands = self.subcommands(of: invocation, help: text)
                        if !subcommands.isEmpty, let first = invocation.arguments.first, !subcommands.contains(first) {
                            problems.fail("\(at) \(first): no such subcommand (\(subcommands.sorted().joined(separator: ", ")))")
                        }
                        for flag in invocation.arguments.compactMap(flagName) where !mentions(text, flag) && !universal.contains(flag) {
                            problems.fail("\(at): no option \(flag) in its --help")
                        }
                    }
                }
                // A flag in a span of its own (`--since 7d`) belongs to a command named in the same paragraph or its heading.
                named += invocations(in: block.heading)
                guard !block.fenced, !named.isEmpty else { continue }
                for span in Markdown.codeSpans(block.text) where span.hasPrefix("--") {
                    guard let flag = flagName(span.split(separator: " ").first.map(String.init) ?? span), !universal.contains(flag) else { continue }
                    let helps = try named.compactMap { try help.help($0.binary, $0.command) }
                    problems.checked.append(flag)
                    if !helps.contains(where: { mentions($0, flag) }) {
                        let commands = named.map { "\($0.binary) \($0.command)" }.joined(separator: ", ")
                        problems.fail("\(document.path):\(block.line): \(flag): not an option of \(commands)")
                    }
                }
            }
        }
        return problems
    }

    /// `--since` of `--since`, `--since=7d` or `--since,`; nil for anything else.
    static func flagName(_ word: String) -> String? {
        guard let match = matches(#"^(--[a-z][a-z0-9-]*)"#, in: word).first else { return nil }
        return match[1]
    }

    /// Whether help text names `flag` as a whole word.
    static func mentions(_ help: String, _ flag: String) -> Bool {
        !matches("(?<![a-z0-9-])" + NSRegularExpression.escapedPattern(for: flag) + "(?![a-z0-9-])", in: help).isEmpty
    }

    /// The literal second words of a command's synopses (`keys generate`,
    /// `keys hash`), when every synopsis has one; empty otherwise.
    static func subcommands(of invocation: Invocation, help: String) -> Set<String> {
        let synopses = help.split(separator: "\n").filter { $0.hasPrefix("usage: \(invocation.binary) \(invocation.command)") }
        let second = synopses.map { line in line.split(separator: " ").dropFirst(3).first.map(String.init) ?? "" }
        guard !second.isEmpty, second.allSatisfy({ $0.range(of: #"^[a-z][a-z-]*$"#, options: .regularExpression) != nil }) else { return [] }
        return Set(second)
    }

    // MARK: exit statuses

    /// The statuses a command's help declares (its "Exit status:" lines),
    /// each with the first word of its meaning (`verified`, `usage`).
    static func exitStatuses(help: String) -> [Int: String] {
        guard let section = help.components(separatedBy: "\nExit status:\n").dropFirst().first else { return [:] }
        var statuses: [Int: String] = [:]
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            let words = line.dropFirst(2).split(separator: " ")
            guard line.hasPrefix("  "), let status = Int(words.first ?? "") else { break }
            statuses[status] = words.dropFirst().first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: ":,")) } ?? ""
        }
        return statuses
    }

    /// Each sentence naming an exit status (`exits 3`, `exit status: 0 …,
    /// 1 …`) is held to the command it is about: the one the sentence names,
    /// else its section's heading names, else the last one named before it in
    /// its paragraph or the one before. A sentence listing three or more
    /// gives the whole list and must name them all; a status given the word
    /// the help gives another (`1 verified`) is wrong; one naming no command
    /// is held to the statuses any command has.
    static func exitStatusProblems(in documents: [Markdown], help: CommandHelpCache) throws -> Findings {
        var all: Set<Int> = []
        for (binary, commands) in [("veridoc", CommandHelpTests.product), ("veridoc-dev", CommandHelpTests.developer)] {
            for command in commands { all.formUnion(exitStatuses(help: try help.help(binary, command) ?? "").keys) }
        }
        var problems = Findings()
        for document in documents {
            var previous: Invocation?
            for block in document.blocks {
                let blockInvocations = commandTexts(of: block).flatMap(invocations)
                defer { if let last = blockInvocations.last { previous = last } }
                guard !block.fenced else { continue }
                let heading = invocations(in: block.heading).first
                var lastInBlock = previous
                let plain = block.text.replacingOccurrences(of: "*", with: "").replacingOccurrences(of: "\n", with: " ")
                for sentence in plain.components(separatedBy: ". ") {
                    let named = Markdown.codeSpans(sentence).flatMap(invocations(in:))
                    defer { if let last = named.last { lastInBlock = last } }
                    let claims = claimedExitStatuses(sentence)
                    guard !claims.isEmpty else { continue }
                    let statuses = claims.map(\.status)
                    let subject = named.first ?? heading ?? lastInBlock
                    var declared = Dictionary(uniqueKeysWithValues: all.map { ($0, "") })
                    var whose = "any command"
                    if let subject, let text = try help.help(subject.binary, subject.command) {
                        declared = exitStatuses(help: text)
                        whose = "\(subject.binary) \(subject.command)"
                    }
                    let at = "\(document.path):\(block.line)"
                    problems.checked.append("\(whose): \(statuses)")
                    for status in statuses.sorted() where declared[status] == nil {
                        problems.fail("\(at): exit status \(status) is not one of \(whose)'s (\(declared.keys.sorted()))")
                    }
                    if statuses.count >= 3, whose != "any command", Set(statuses) != Set(declared.keys) {
                        problems.fail("\(at): \(whose)'s exit statuses are \(declared.keys.sorted()), the text lists \(statuses.sorted())")
                    }
                    for claim in claims where !claim.word.isEmpty {
                        if let other = declared.first(where: { $0.value == claim.word && $0.key != claim.status }) {
                            problems.fail("\(at): \(whose) exits \(other.key) for \(claim.word), the text says \(claim.status)")
                        }
                    }
                }
            }
        }
        return problems
    }

    /// The numbers a sentence gives as exit statuses, each with the word that
    /// says what it means (`0 verified`, `2 for a usage …`: `usage`): the one
    /// after `exit`, `exits`, `exit status` or `exit code`, and those listed
    /// after it (`, 1 …`, `; 2 …`, `(1 for …`, `and 3 …`).
    static func claimedExitStatuses(_ sentence: String) -> [(status: Int, word: String)] {
        let text = sentence.replacingOccurrences(of: "`", with: "")
        let meaning = #"(?::?\s+(?:for\s+|on\s+|when\s+)?(?:an?\s+|the\s+)?([a-z_]+))?"#
        guard let first = matches(#"(?i)\bexit(?:s|ed)?(?: status(?:es)?| code)?:?\s+(\d+)(?!\d|[.,]\d)"# + meaning, in: text).first,
              let start = text.range(of: first[0]) else { return [] }
        var claims = [(Int(first[1]) ?? -1, first[2])]
        let rest = String(text[start.upperBound...])
        // One digit after a separator, then its meaning: "60 s" or "for 5 min" are not statuses.
        for match in matches(#"(?:[,;(]\s*|\band\s+|\bor\s+)(\d)(?!\d|[.,]\d|%)(?=:|\s+[a-z_])"# + meaning, in: rest) {
            claims.append((Int(match[1]) ?? -1, match[2]))
        }
        return claims
    }

    // MARK: metrics

    /// `{name: labels}` of every `registry.counter/gauge/histogram("…"` call in Sources/ (as deploy/lint/monitoring.py reads them).
    static func registeredMetrics(in sources: URL) throws -> [String: (kind: String, labels: Set<String>)] {
        var metrics: [String: (kind: String, labels: Set<String>)] = [:]
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let calls = text.components(separatedBy: "registry.").dropFirst()
            for call in calls {
                guard let match = matches(#"^(counter|gauge|histogram)\(\s*"([A-Za-z_:][A-Za-z0-9_:]*)""#, in: call).first else { continue }
                // The call ends at the first `)` that ends a line (a help text may hold parentheses).
                let statement = call.components(separatedBy: ")\n").first ?? call
                let labels = matches(#"\blabels:\s*\[([^\]]*)\]"#, in: statement).first.map { matches(#""([^"]+)""#, in: $0[1]).map { $0[1] } } ?? []
                metrics[match[2]] = (match[1], Set(labels))
            }
        }
        return metrics
    }

    static func metricProblems(in documents: [Markdown], registered: [String: (kind: String, labels: Set<String>)]) -> Findings {
        var problems = Findings()
        for document in documents {
            for block in document.blocks {
                let texts = block.fenced ? [block.text] : Markdown.codeSpans(block.text)
                for text in texts {
                    for match in matches(#"(?<![A-Za-z0-9_])(veridoc_[a-z0-9_]+)(\{([a-z_,]*)\})?"#, in: text) {
                        var name = match[1]
                        if registered[name] == nil {
                            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                                let base = String(name.dropLast(suffix.count))
                                if registered[base]?.kind == "histogram" { name = base }
                            }
                        }
                        problems.checked.append(match[0])
                        guard let metric = registered[name] else {
                            problems.fail("\(document.path):\(block.line): \(match[1]) is not registered in Sources/")
                            continue
                        }
                        let labels = match[3].split(separator: ",").map(String.init).filter { $0 != "le" }
                        for label in labels where !metric.labels.contains(label) {
                            problems.fail("\(document.path):\(block.line): \(name) has no label \(label) (\(metric.labels.sorted()))")
                        }
                    }
                }
            }
        }
        return problems
    }

    // MARK: settings

    struct KnownSettings {
        /// `kafka.groupId`, `tenants[].vicals[].graceSeconds`, and the Helm chart's `serve.replicaCount`.
        var paths: Set<String>
        /// Paths whose members are free (`kafka.properties`): anything below them is known.
        var open: Set<String>
        /// First segments a path must start with to be read as a setting.
        var roots: Set<String>
    }

    /// The config schema's paths (every `properties` member, `[]` for
    /// arrays, `$ref`s followed) and the Helm values' keys (`config.` prefixed
    /// ones are the config file's).
    static func knownSettings(repository: URL) throws -> KnownSettings {
        let data = try Data(contentsOf: repository.appendingPathComponent("Schemas/config.schema.json"))
        let schema = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let definitions = schema["$defs"] as? [String: Any] ?? [:]
        var known = KnownSettings(paths: [], open: [], roots: [])
        func resolved(_ node: [String: Any]) -> [String: Any] {
            guard let reference = node["$ref"] as? String, reference.hasPrefix("#/$defs/") else { return node }
            return resolved(definitions[String(reference.dropFirst(8))] as? [String: Any] ?? [:])
        }
        func walk(_ raw: [String: Any], _ path: String, depth: Int) {
            guard depth < 12 else { return }
            let node = resolved(raw)
            for variant in (node["anyOf"] as? [[String: Any]] ?? []) + (node["oneOf"] as? [[String: Any]] ?? []) {
                walk(variant, path, depth: depth + 1)
            }
            if let items = node["items"] as? [String: Any] {
                known.paths.insert(path + "[]")
                walk(items, path + "[]", depth: depth + 1)
            }
            if node["additionalProperties"] is [String: Any] || node["additionalProperties"] as? Bool == true { known.open.insert(path) }
            for (name, member) in node["properties"] as? [String: Any] ?? [:] where !name.hasPrefix("$") {
                let full = path.isEmpty ? name : path + "." + name
                known.paths.insert(full)
                if let member = member as? [String: Any] { walk(member, full, depth: depth + 1) }
            }
        }
        walk(schema, "", depth: 0)
        // `config.worker.threads` in the chart is the config file's `worker.threads`.
        for path in known.paths { known.paths.insert("config." + path) }
        for path in known.open { known.open.insert("config." + path) }
        // A tenant's members are also named on their own (`vicals[].graceSeconds`).
        for path in known.paths where path.hasPrefix("tenants[].") { known.paths.insert(String(path.dropFirst(10))) }
        for path in known.open where path.hasPrefix("tenants[].") { known.open.insert(String(path.dropFirst(10))) }
        for path in known.paths { known.roots.insert(String(path.split(separator: ".").first ?? "").replacingOccurrences(of: "[]", with: "")) }

        // The chart's values.yaml: keys by indentation (two spaces a level), list items skipped.
        let values = try String(contentsOf: repository.appendingPathComponent("Helm/veridoc/values.yaml"), encoding: .utf8)
        var stack: [(indent: Int, key: String)] = []
        for line in values.split(separator: "\n") {
            guard let match = matches(#"^( *)([A-Za-z][A-Za-z0-9_-]*):(?:\s|$)"#, in: String(line)).first else { continue }
            let indent = match[1].count
            stack.removeAll { $0.indent >= indent }
            stack.append((indent, match[2]))
            let path = stack.map(\.key).joined(separator: ".")
            known.paths.insert(path)
            if stack.count == 1 { known.roots.insert(match[2]) }
        }
        known.roots.insert("config")
        return known
    }

    static let fileExtensions: Set<String> = ["json", "md", "yaml", "yml", "pem", "key", "crt", "cer", "swift", "txt", "html", "sql", "dump", "py", "sh", "vical", "mobileconfig"]

    static func settingProblems(in documents: [Markdown], known: KnownSettings) -> Findings {
        var problems = Findings()
        for document in documents {
            for block in document.blocks where !block.fenced {
                for span in Markdown.codeSpans(block.text) {
                    // `a.b`, `a[].b`, `tenants[]`, `kafka.offsetGapPolicy=stop`: a path of names, at least two or an array.
                    let candidate = span.split(separator: "=").first.map(String.init) ?? span
                    guard candidate.range(of: #"^[a-z][A-Za-z0-9]*(\[\])?(\.[a-z][A-Za-z0-9]*(\[\])?)*$"#, options: .regularExpression) != nil,
                          candidate.contains(".") || candidate.hasSuffix("[]") else { continue }
                    // `config.json`, `nonce.key`: a file, not a path of settings.
                    if let last = candidate.split(separator: ".").last, fileExtensions.contains(String(last)) { continue }
                    // `status.revoked`: a reason code, whose family shares its name with the tenant's `status`.
                    if ReasonCode(rawValue: candidate) != nil { continue }
                    let root = String(candidate.split(separator: ".").first ?? "").replacingOccurrences(of: "[]", with: "")
                    guard known.roots.contains(root) else { continue }
                    problems.checked.append(candidate)
                    if known.paths.contains(candidate) { continue }
                    if known.open.contains(where: { candidate.hasPrefix($0 + ".") }) { continue }
                    problems.fail("\(document.path):\(block.line): \(candidate) is not a setting (Schemas/config.schema.json, Helm/veridoc/values.yaml)")
                }
            }
        }
        return problems
    }

    /// The `VERIDOC_…` variables the code reads: string literals in Sources/
    /// (a literal ending in `_`, as `VERIDOC_KAFKA_PROPERTY_`, is a prefix),
    /// and those the tests, scripts/fuzz and the fuzz targets read.
    static func knownEnvironment(repository: URL) throws -> Set<String> {
        var names: Set<String> = []
        for folder in ["Sources", "Tests", "Fuzz"] {
            let files = FileManager.default.enumerator(at: repository.appendingPathComponent(folder), includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            for file in files where file.pathExtension == "swift" {
                names.formUnion(matches(#""(VERIDOC_[A-Z0-9_]*)"#, in: try String(contentsOf: file, encoding: .utf8)).map { $0[1] })
            }
        }
        for script in ["scripts/fuzz", "scripts/run-tests", "scripts/with-test-services", "Makefile"] {
            let text = (try? String(contentsOf: repository.appendingPathComponent(script), encoding: .utf8)) ?? ""
            names.formUnion(matches(#"\b(VERIDOC_[A-Z0-9_]*[A-Z0-9])\b"#, in: text).map { $0[1] })
        }
        return names
    }

    /// Each `VERIDOC_NAME` in a code span (`$VERIDOC_API_KEY`, a shell
    /// variable of the reader's, and patterns such as `VERIDOC_KAFKA_*_TOPIC`
    /// aside) is one the code reads.
    static func environmentProblems(in documents: [Markdown], known: Set<String>) -> Findings {
        var problems = Findings()
        for document in documents {
            for block in document.blocks where !block.fenced {
                for span in Markdown.codeSpans(block.text) {
                    for match in matches(#"(?<![$A-Za-z0-9_])(VERIDOC_[A-Z0-9_]*[A-Z0-9])(?![A-Za-z0-9_*<])"#, in: span) {
                        let name = match[1]
                        problems.checked.append(name)
                        if known.contains(name) || known.contains(where: { $0.hasSuffix("_") && name.hasPrefix($0) }) { continue }
                        problems.fail("\(document.path):\(block.line): \(name) is not read by the code")
                    }
                }
            }
        }
        return problems
    }

    // MARK: links and repository paths

    /// The folders and files of the checkout a code span may name.
    static let repositoryPrefixes = ["Sources/", "Tests/", "Schemas/", "docs/", "scripts/", "deploy/", "Helm/", "bench/", "chaos/", "Fuzz/", ".ci/"]

    static func pathProblems(in documents: [Markdown], repository: URL) -> Findings {
        var problems = Findings()
        let anchors = Dictionary(documents.map { ($0.path, $0.anchors) }, uniquingKeysWith: { first, _ in first })
        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: repository.appendingPathComponent(path).path) }
        for document in documents {
            let folder = (document.path as NSString).deletingLastPathComponent
            for block in document.blocks where !block.fenced {
                let at = "\(document.path):\(block.line)"
                let withoutSpans = block.text.replacingOccurrences(of: #"`[^`\n]+`"#, with: "``", options: .regularExpression)
                for match in matches(#"\]\(([^)\s]+)\)"#, in: withoutSpans) {
                    let link = match[1]
                    if link.hasPrefix("http://") || link.hasPrefix("https://") || link.hasPrefix("mailto:") { continue }
                    let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    problems.checked.append(link)
                    let target = parts[0].isEmpty ? document.path : normalized(folder.isEmpty ? parts[0] : folder + "/" + parts[0])
                    guard exists(target) else {
                        problems.fail("\(at): link \(link): \(target) does not exist")
                        continue
                    }
                    if parts.count == 2, target.hasSuffix(".md") {
                        let headings = anchors[target] ?? (try? String(contentsOf: repository.appendingPathComponent(target), encoding: .utf8)).map { Markdown(path: target, text: $0).anchors } ?? []
                        if !headings.contains(parts[1]) { problems.fail("\(at): link \(link): \(target) has no heading #\(parts[1])") }
                    }
                }
                for span in Markdown.codeSpans(block.text) {
                    var path = String(span.split(separator: " ").first ?? "")
                    guard repositoryPrefixes.contains(where: { path.hasPrefix($0) }) else { continue }
                    // A pattern or placeholder names the folder before it.
                    if let cut = path.firstIndex(where: { "*<{…".contains($0) }) {
                        path = String(path[..<cut])
                        path = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
                    }
                    while let last = path.last, ",.:;)".contains(last) { path.removeLast() }
                    problems.checked.append(path)
                    if !exists(path) { problems.fail("\(at): \(path) is not in the repository") }
                }
            }
        }
        return problems
    }

    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == ".." { if !parts.isEmpty { parts.removeLast() } } else if part != "." { parts.append(part) }
        }
        return parts.joined(separator: "/") + (path.hasSuffix("/") && !parts.isEmpty ? "/" : "")
    }

    // MARK: regular expressions

    /// Every match of `pattern` in `text`, each as its groups (0 the whole match; "" for a group that took no part).
    static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let expression = try? NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines]) else { return [] }
        let string = text as NSString
        return expression.matches(in: text, range: NSRange(location: 0, length: string.length)).map { match in
            (0..<match.numberOfRanges).map { index in
                let range = match.range(at: index)
                return range.location == NSNotFound ? "" : string.substring(with: range)
            }
        }
    }
}
