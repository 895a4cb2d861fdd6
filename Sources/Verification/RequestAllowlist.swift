import MDoc
import Settings

/// A tenant's `requestableElements`: the only docTypes and elements serve
/// makes sessions for, matched by their bytes like every identifier.
public struct RequestAllowlist: Sendable {
    private struct Element: Hashable, Sendable {
        let docType: Identifier
        let namespace: Identifier
        let element: Identifier
    }

    private let docTypes: Set<Identifier>
    private let elements: Set<Element>

    /// Nil for no entries: a tenant without the setting may ask anything.
    public init?(_ entries: [TenantSettings.RequestableElements]) {
        guard !entries.isEmpty else { return nil }
        docTypes = Set(entries.map { Identifier($0.docType) })
        elements = Set(entries.flatMap { entry in
            entry.elements.map { Element(docType: Identifier(entry.docType), namespace: Identifier(entry.namespace), element: Identifier($0)) }
        })
    }

    public func allows(docType: String) -> Bool { docTypes.contains(Identifier(docType)) }

    public func allows(_ element: RequestedElement, of docType: String) -> Bool {
        elements.contains(Element(docType: Identifier(docType), namespace: Identifier(element.namespace), element: Identifier(element.element)))
    }
}
