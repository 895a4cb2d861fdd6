import CommandLineSupport
import DocumentTypes

/// `veridoc-dev catalogue`: the document catalogue as Markdown tables, the
/// part of docs/document-types.md between its markers.
enum CatalogueCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.returning(usage: Usage.text, failure: "catalogue failed") {
            let parsed = try ParsedArguments(arguments, options: [], flags: [])
            guard parsed.positional.isEmpty else { throw UsageError("catalogue takes no arguments") }
            print(DocumentCatalogue.shared.markdown)
            return 0
        }
    }
}
