/// The catalogue as Markdown tables, for docs/document-types.md: one
/// section per docType (its other spellings and sources), one table per
/// namespace. `veridoc-dev catalogue` prints it; a test holds the docs to it.
extension DocumentCatalogue {
    public var markdown: String {
        var lines: [String] = []
        for type in documentTypes {
            lines.append("### `\(type.docType)`")
            lines.append("")
            lines.append(type.title + (type.otherDocTypes.isEmpty ? "." : "; also read as " + type.otherDocTypes.map { "`\($0)`" }.joined(separator: ", ") + "."))
            lines.append("")
            lines.append("Sources:")
            lines += type.sources.map { "- \($0)" }
            for namespace in type.namespaces {
                lines.append("")
                lines.append("| `\(namespace.name)` | type | kind | note |")
                lines.append("|---|---|---|---|")
                for element in namespace.elements {
                    var note = element.note ?? ""
                    if let same = element.sameAs { note = (note.isEmpty ? "" : note + "; ") + "the same as `\(same)`" }
                    lines.append("| `\(element.identifier)` | \(element.type.rawValue) | \(element.kind.rawValue) | \(note) |")
                }
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }
}
