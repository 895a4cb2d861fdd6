/// One catalogued document type: its docType, the namespaces it uses and
/// every element the catalogue knows in each, read from a file of the
/// catalogue (`catalogue/*.json`).
public struct DocumentType: Sendable {
    public let docType: String
    /// Earlier spellings issuers still send (a draft's docType, a pilot's).
    public let otherDocTypes: [String]
    public let title: String
    /// Where each table comes from.
    public let sources: [String]
    public let namespaces: [Namespace]

    public struct Namespace: Sendable {
        public let name: String
        public let elements: [Element]
        /// Exact identifiers, for lookups.
        let byIdentifier: [String: Element]
        /// Identifiers with `##` (two digits) or `*` (one or more of a-z, 0-9, _).
        let patterns: [Element]

        init(name: String, elements: [Element]) {
            self.name = name
            self.elements = elements
            byIdentifier = Dictionary(elements.filter { !$0.isPattern }.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
            patterns = elements.filter(\.isPattern)
        }

        /// The element `identifier` names, byte for byte; nil when the catalogue does not know it.
        public func element(_ identifier: String) -> Element? {
            if let exact = byIdentifier[identifier], exact.identifier.utf8.elementsEqual(identifier.utf8) { return exact }
            return patterns.first { $0.matches(identifier) }
        }
    }

    public struct Element: Sendable {
        /// As the catalogue writes it: `age_over_##` stands for `age_over_00` … `age_over_99`.
        public let identifier: String
        public let type: ElementType
        public let kind: ElementKind
        /// Another spelling of the same element (a renamed draft identifier), which it maps to.
        public let sameAs: String?
        public let note: String?

        var isPattern: Bool { identifier.contains("##") || identifier.contains("*") }

        /// Whether `candidate` is an identifier this (pattern) element stands for.
        func matches(_ candidate: String) -> Bool {
            var pattern = Array(identifier.utf8)[...]
            var text = Array(candidate.utf8)[...]
            while let next = pattern.first {
                if pattern.starts(with: Array("##".utf8)) {
                    guard text.count >= 2, text.prefix(2).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
                    pattern = pattern.dropFirst(2)
                    text = text.dropFirst(2)
                } else if next == UInt8(ascii: "*") {
                    // Only at the end: one or more of a-z, 0-9, _.
                    guard pattern.count == 1, !text.isEmpty else { return false }
                    return text.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f }
                } else {
                    guard text.first == next else { return false }
                    pattern = pattern.dropFirst()
                    text = text.dropFirst()
                }
            }
            return text.isEmpty
        }
    }

    /// The namespace `name`, byte for byte.
    public func namespace(_ name: String) -> Namespace? {
        namespaces.first { $0.name.utf8.elementsEqual(name.utf8) }
    }
}
