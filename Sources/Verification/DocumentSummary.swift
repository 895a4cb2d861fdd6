import CBOR
import Foundation

/// What a verified (or rejected) document discloses about itself: facts for
/// outcomes and analytics, and the disclosed elements with their values for
/// whoever is allowed to keep them.
public struct DocumentSummary: Sendable {
    public var docType: String
    public var issuerSubject: String?
    public var issuerCountry: String?
    public var signed: Date?
    public var validFrom: Date?
    public var validUntil: Date?
    public var elements: [DisclosedElement]
}

public struct DisclosedElement: Sendable {
    public let namespace: String
    public let identifier: String
    /// The element value as received; nil once released
    /// (`DocumentSummary.releasingValues()`). Personal data: never log it.
    public let value: CBORItem?
}

extension DocumentSummary {
    /// The summary with its element names and none of their values.
    public func releasingValues() -> DocumentSummary {
        var summary = self
        summary.elements = elements.map { DisclosedElement(namespace: $0.namespace, identifier: $0.identifier, value: nil) }
        return summary
    }
}
