import CBOR
import DocumentTypes
import Foundation
import MDoc

extension TestIssuer.Credential {
    /// A credential of the catalogued `type` holding a value for every
    /// element its catalogue file lists, each of the element's CBOR type
    /// (a pattern once: `age_over_18`, `biometric_template_face`): the
    /// catalogue is the test issuer's list of what a document holds, so a
    /// docType added to it can be minted at once. Values are synthetic,
    /// shaped as the type says; `issuingCountry` and `issuingSubdivision`
    /// are the issuer's (the verifier compares them with its certificates).
    public static func sample(of type: DocumentType, now: Date, issuingCountry: String = "US", issuingSubdivision: String = "CA",
                              using random: inout some RandomNumberGenerator) -> TestIssuer.Credential {
        var credential = TestIssuer.Credential(docType: type.docType, nameSpaces: [])
        for namespace in type.namespaces {
            for element in namespace.elements {
                let identifier = sampleIdentifier(element.identifier)
                credential[namespace.name, identifier] = switch identifier {
                case "issuing_country": .text(issuingCountry)
                case "issuing_jurisdiction", "issuing_subdivision": .text(issuingSubdivision)
                default: sampleValue(element.type, now: now, using: &random)
                }
            }
        }
        return credential
    }

    /// A pattern's identifier made concrete; others as they are.
    public static func sampleIdentifier(_ identifier: String) -> String {
        identifier.replacingOccurrences(of: "##", with: "18").replacingOccurrences(of: "*", with: "face")
    }

    /// A value of `type`.
    public static func sampleValue(_ type: ElementType, now: Date, using random: inout some RandomNumberGenerator) -> CBOR {
        let day: TimeInterval = 86_400
        switch type {
        case .text: return .text("Sample \(Int.random(in: 100...999, using: &random))")
        case .unsigned: return .unsigned(UInt64.random(in: 1...9, using: &random))
        case .integer: return .int(Int64.random(in: -9...9, using: &random))
        case .boolean: return .bool(Bool.random(using: &random))
        case .bytes: return .bytes((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        case .fullDate, .date: return fullDate(now - TimeInterval(Int.random(in: 1_000...20_000, using: &random)) * day)
        case .dateTime: return .tagged(0, .text(RFC3339.string(from: Date(timeIntervalSince1970: (now - day).timeIntervalSince1970.rounded(.down)))))
        case .textArray, .textOrTextArray: return [.text("DE"), .text("FR")]
        case .array: return [.text("Sample")]
        case .map: return ["sample": .text("Sample")]
        case .drivingPrivileges: return [["vehicle_category_code": "B", "issue_date": fullDate(now - 400 * day)]]
        case .birthDate: return ["birth_date": fullDate(now - 30 * 365 * day), "approximate_mask": "00000000"]
        case .placeOfBirth: return ["country": "DE", "locality": "Berlin"]
        }
    }

    /// A value that is not of `type` (a wrong major type, or a date left
    /// untagged): what an issuer that encodes loosely sends.
    public static func mistypedValue(_ type: ElementType) -> CBOR {
        switch type {
        case .text, .textOrTextArray: .unsigned(7)
        case .unsigned, .integer: .text("7")
        case .boolean: .text("true")
        case .bytes: .text("bstr")
        case .fullDate, .date, .birthDate: .text("1990-01-01")
        case .dateTime: .text("2024-01-01T00:00:00Z")
        case .textArray, .array, .drivingPrivileges: .text("B")
        case .map, .placeOfBirth: .text("Berlin")
        }
    }
}
