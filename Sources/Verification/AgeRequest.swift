import DocumentTypes

/// A request for Apple's `age(atLeast:)` (`PKIdentityElement.age(atLeast:)`,
/// ProximityReader's `.ageAtLeast(_:)`): "is the holder at least `age`
/// years old?", answered in the outcome (`AgeAnswer`) from whichever element
/// the document returned. Like any element it states an intent to retain,
/// which goes to the wallet with the request.
public struct AgeRequest: Sendable, Equatable {
    public let age: Int
    public let retention: Retention

    /// `willNotStore` unless said otherwise: Apple's recommended intent for an age check.
    public init(age: Int, retention: Retention = .willNotStore) {
        self.age = age
        self.retention = retention
    }

    /// What a wallet is asked for in its place (Apple's mapping: `age_over_NN`,
    /// two digits; from 100 on, where no such element exists, `age_in_years`),
    /// in the namespace of `docType` that the catalogue gives that element;
    /// the mDL's namespace for a docType the catalogue does not know.
    public func requestedElement(docType: String) -> RequestedElement {
        let identifier = age < 100 ? "age_over_" + (age < 10 ? "0" : "") + String(age) : Self.ageElement
        let namespace = DocumentCatalogue.shared.documentType(docType)?.namespaces.first { $0.element(identifier) != nil }?.name
        return RequestedElement(namespace: namespace ?? "org.iso.18013.5.1", element: identifier, retention: retention)
    }

    /// Distinct thresholds one request may ask (ProximityReader keeps a map
    /// of them; a door check asks one or two).
    public static let maxPerRequest = 8

    /// The element Apple's framework asks for in place of `age(atLeast:)`
    /// when the issuer has no `age_over_NN`, and which the seeds forbid in
    /// the same request: both would disclose the age the predicate hides.
    public static let ageElement = "age_in_years"

    /// Why a request's ages cannot stand: the field (as the request names
    /// it, `ageAtLeast[1].age`) and what it must be instead.
    public struct Refusal: Sendable, Equatable {
        public let field: String
        public let expected: String
    }

    /// Why `ages` and `elements` cannot form one request, or nil when they
    /// can: a threshold outside Apple's 1–125 or asked twice, more than
    /// `maxPerRequest` of them, or an `age(atLeast:)` with the `age` element.
    /// Names fields, never a value.
    public static func refusal(_ ages: [AgeRequest], with elements: [RequestedElement]) -> Refusal? {
        guard ages.count <= maxPerRequest else { return Refusal(field: "ageAtLeast", expected: "at most \(maxPerRequest) ages") }
        for (index, request) in ages.enumerated() {
            guard AgeAnswer.thresholds.contains(request.age) else {
                return Refusal(field: "ageAtLeast[\(index)].age",
                               expected: "a whole number from \(AgeAnswer.thresholds.lowerBound) to \(AgeAnswer.thresholds.upperBound)")
            }
            guard !ages[..<index].contains(where: { $0.age == request.age }) else {
                return Refusal(field: "ageAtLeast[\(index)].age", expected: "an age not already asked")
            }
        }
        if !ages.isEmpty, let index = elements.firstIndex(where: { $0.element.hasSameUTF8(as: ageElement) }) {
            return Refusal(field: "requestedElements[\(index)]",
                           expected: "not \(ageElement) in a request with ageAtLeast (one request asks age(atLeast:) or age, never both)")
        }
        return nil
    }
}
