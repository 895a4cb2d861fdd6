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
    /// How the holder's device proved itself; nil until the device check passed.
    public var deviceAuthentication: DeviceAuthenticationMethod? = nil
    /// Whether the issuer still stands by the document; nil until known
    /// (never for a document rejected before its references could be trusted).
    public var status: CredentialStatus? = nil
    /// The elements the holder's device signed (`deviceSigned.nameSpaces`),
    /// names only (no value): the issuer never vouched for them, so they are
    /// listed apart from `elements`, never delivered as values, and never
    /// answer a request for an element or an age.
    public var deviceSignedElements: [DisclosedElement] = []
}

/// How the holder's device authenticated the response (ISO 18013-5 §9.1.3):
/// a signature with the MSO's device key, which anyone can check, or a MAC
/// agreed with a reader's ephemeral key, which proves the device only to that
/// reader, so it is named.
public enum DeviceAuthenticationMethod: Sendable, Equatable {
    case signature
    case mac(reader: String)

    /// "signature" or "mac": the outcome's and the results table's word.
    public var method: String {
        switch self {
        case .signature: "signature"
        case .mac: "mac"
        }
    }

    public var reader: String? {
        if case .mac(let reader) = self { return reader }
        return nil
    }
}

public struct DisclosedElement: Sendable {
    public let namespace: String
    public let identifier: String
    /// The element value as received; nil once released
    /// (`DocumentSummary.releasingValues()`). Personal data: never log it.
    public let value: CBORItem?
    /// Whether the document catalogue knows the element, so that its type
    /// was checked (`mso.element_types`); an untyped element verified all
    /// the same, and the outcome says which it is.
    public var isTyped = false
}

extension DisclosedElement {
    /// A disclosed element's name, without its value.
    public init(namespace: String, identifier: String) {
        self.init(namespace: namespace, identifier: identifier, value: nil)
    }
}

extension DocumentSummary {
    /// The summary with its element names and none of their values.
    public func releasingValues() -> DocumentSummary {
        var summary = self
        summary.elements = elements.map { DisclosedElement(namespace: $0.namespace, identifier: $0.identifier, value: nil, isTyped: $0.isTyped) }
        return summary
    }
}
