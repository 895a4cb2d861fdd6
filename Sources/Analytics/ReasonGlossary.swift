import CEmbeddedFiles
import Foundation

/// What each reason code means, read from the "Codes" table of
/// Schemas/reason-codes.md as compiled into the binary (CEmbeddedFiles embeds
/// it), so the report's explanations are the document's words and cannot
/// drift from it.
public struct ReasonGlossary: Sendable {
    public struct Entry: Sendable, Equatable {
        public let meaning: String
        public let typicalCause: String
    }

    public let entries: [String: Entry]

    public static let shared: ReasonGlossary = {
        var count = 0
        let start = veridoc_embedded_file(VERIDOC_EMBEDDED_REASON_CODES, &count)
        return ReasonGlossary(markdown: String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self))
    }()

    /// The rows of the "## Codes" table: `| \`code\` | check | meaning | cause | action |`.
    /// Cells hold no `|` (a test keeps every code of ReasonCode explained).
    public init(markdown: String) {
        var entries: [String: Entry] = [:]
        var inCodes = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inCodes = line == "## Codes"; continue }
            guard inCodes, line.hasPrefix("| `") else { continue }
            let cells = line.dropFirst().split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            let code = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            entries[code] = Entry(meaning: cells[2], typicalCause: cells[3])
        }
        self.entries = entries
    }

    /// The meaning as HTML: markdown's `code` spans become <code>, emphasis marks go.
    public func meaningHTML(_ code: String) -> String? { entries[code].map { Self.html($0.meaning) } }
    public func typicalCauseHTML(_ code: String) -> String? { entries[code].map { Self.html($0.typicalCause) } }

    /// The meaning's opening, up to its first sentence end outside a code span,
    /// at most about `limit` characters (cut at a word, with "…"): for the headline.
    public func summaryHTML(_ code: String, limit: Int = 140) -> String? {
        guard let meaning = entries[code]?.meaning else { return nil }
        let characters = Array(meaning)
        var sentence = ""
        var inCode = false
        for (index, character) in characters.enumerated() {
            if character == "`" { inCode.toggle() }
            let endsSentence = character == "." && (index + 1 == characters.count || characters[index + 1] == " ")
            if !inCode && endsSentence { break }
            sentence.append(character)
        }
        if sentence.count > limit {
            var cut = String(sentence.prefix(limit))
            // At the last clause break in the second half, else the last word; never inside parentheses or a code span.
            if let clause = [", ", "; ", ": "].compactMap({ cut.range(of: $0, options: .backwards)?.lowerBound }).max(),
               cut.distance(from: cut.startIndex, to: clause) > limit / 2 {
                cut = String(cut[..<clause])
            } else if let space = cut.lastIndex(of: " ") {
                cut = String(cut[..<space])
            }
            if cut.filter({ $0 == "(" }).count > cut.filter({ $0 == ")" }).count, let open = cut.lastIndex(of: "(") {
                cut = String(cut[..<open])
            }
            if cut.filter({ $0 == "`" }).count % 2 == 1, let tick = cut.lastIndex(of: "`") { cut = String(cut[..<tick]) }
            sentence = cut.trimmingCharacters(in: CharacterSet(charactersIn: ",;: ")) + "…"
        }
        return Self.html(sentence)
    }

    static func html(_ markdown: String) -> String {
        var out = ""
        for (index, part) in markdown.split(separator: "`", omittingEmptySubsequences: false).enumerated() {
            let text = ReportHTML.escape(String(part))
            out += index % 2 == 1 ? "<code>\(text)</code>" : text.replacingOccurrences(of: "*", with: "")
        }
        return out
    }
}
