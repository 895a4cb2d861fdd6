import CBOR
import Foundation
import MDoc

extension TestIssuer {
    /// What an issuer knows about a holder before signing: a docType and its
    /// data elements by namespace, in the order they will be disclosed.
    public struct Credential: Sendable {
        public static let mDLDocType = "org.iso.18013.5.1.mDL"
        public static let mDLNameSpace = "org.iso.18013.5.1"
        public static let aamvaNameSpace = "org.iso.18013.5.1.aamva"

        public var docType: String
        public var nameSpaces: [NameSpace]

        public struct NameSpace: Sendable {
            public var name: String
            public var elements: [Element]

            public init(name: String, elements: [Element]) {
                self.name = name
                self.elements = elements
            }
        }

        public struct Element: Sendable {
            public var identifier: String
            public var value: CBOR

            public init(_ identifier: String, _ value: CBOR) {
                self.identifier = identifier
                self.value = value
            }
        }

        public init(docType: String, nameSpaces: [NameSpace]) {
            self.docType = docType
            self.nameSpaces = nameSpaces
        }

        /// An element's value; setting one that does not exist appends it (and its namespace).
        public subscript(namespace: String, identifier: String) -> CBOR? {
            get {
                nameSpaces.first { $0.name == namespace }?.elements.first { $0.identifier == identifier }?.value
            }
            set {
                let spaceIndex = nameSpaces.firstIndex { $0.name == namespace } ?? {
                    nameSpaces.append(NameSpace(name: namespace, elements: []))
                    return nameSpaces.count - 1
                }()
                let elements = nameSpaces[spaceIndex].elements
                if let elementIndex = elements.firstIndex(where: { $0.identifier == identifier }) {
                    if let newValue {
                        nameSpaces[spaceIndex].elements[elementIndex].value = newValue
                    } else {
                        nameSpaces[spaceIndex].elements.remove(at: elementIndex)
                    }
                } else if let newValue {
                    nameSpaces[spaceIndex].elements.append(Element(identifier, newValue))
                }
            }
        }

        /// `full-date = #6.1004(tstr)` (RFC 8943), as Apple's sample encodes dates.
        /// Makes the holder `years` old at `now` (a month past the birthday):
        /// `birth_date`, `age_in_years` and every `age_over_NN` the credential holds.
        public mutating func setAge(_ years: Int, now: Date) {
            let day: TimeInterval = 86_400
            let birth = now - (TimeInterval(years) * 365.2425 + 30) * day
            self[Self.mDLNameSpace, "birth_date"] = Self.fullDate(birth)
            self[Self.mDLNameSpace, "age_in_years"] = .int(Int64(years))
            for threshold in 1...99 {
                let name = "age_over_" + (threshold < 10 ? "0" : "") + String(threshold)
                if self[Self.mDLNameSpace, name] != nil { self[Self.mDLNameSpace, name] = .bool(years >= threshold) }
            }
        }

        public static func fullDate(_ date: Date) -> CBOR {
            .tagged(1004, .text(String(RFC3339.string(from: date).prefix(10))))
        }

        /// A mobile driving licence with the elements relying parties ask for,
        /// in both the ISO namespace and AAMVA's. Values are drawn from `random`;
        /// the portrait is `portraitSize` bytes shaped like a JPEG, so payloads
        /// have the few-KB size real ones have.
        public static func mobileDrivingLicence(now: Date, portraitSize: Int = 3_000, using random: inout some RandomNumberGenerator) -> Credential {
            let givenNames = ["Avery", "Jordan", "Mei", "Santiago", "Priya", "Olusegun", "Hannah", "Mateo", "Aiko", "Noor"]
            let familyNames = ["Nakamura", "Okafor", "Lindqvist", "Castillo", "Brennan", "Haddad", "Kowalski", "Ferreira", "Singh", "Moreau"]
            let day: TimeInterval = 86_400
            let age = Int.random(in: 22...80, using: &random)
            let birth = now - TimeInterval(age * 365 + age / 4 + Int.random(in: 1...300, using: &random)) * day
            let issued = now - TimeInterval(Int.random(in: 30...1_400, using: &random)) * day
            let expires = issued + 8 * 365 * day
            let years = Int(now.timeIntervalSince(birth) / (365.2425 * day))

            var portrait: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x48, 0x00, 0x48, 0x00, 0x00]
            portrait += random.bytes(max(0, portraitSize - portrait.count - 2)) + [0xFF, 0xD9]

            let documentNumber = "D" + (0..<8).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            let iso: [Element] = [
                Element("family_name", .text(familyNames.randomElement(using: &random)!)),
                Element("given_name", .text(givenNames.randomElement(using: &random)!)),
                Element("birth_date", fullDate(birth)),
                Element("issue_date", fullDate(issued)),
                Element("expiry_date", fullDate(expires)),
                Element("issuing_country", "US"),
                Element("issuing_authority", "California DMV"),
                Element("document_number", .text(documentNumber)),
                Element("portrait", .bytes(portrait)),
                Element("driving_privileges", [
                    ["vehicle_category_code": "C", "issue_date": fullDate(issued), "expiry_date": fullDate(expires)],
                ]),
                Element("un_distinguishing_sign", "USA"),
                Element("sex", .int(Int64(Int.random(in: 1...2, using: &random)))),
                Element("height", .int(Int64(Int.random(in: 150...200, using: &random)))),
                Element("resident_state", "CA"),
                Element("age_in_years", .int(Int64(years))),
                Element("age_over_18", .bool(years >= 18)),
                Element("age_over_21", .bool(years >= 21)),
                Element("age_over_65", .bool(years >= 65)),
            ]
            let aamva: [Element] = [
                Element("DHS_compliance", "F"),
                Element("organ_donor", 1),
                Element("family_name_truncation", "N"),
                Element("given_name_truncation", "N"),
                Element("aamva_version", 1),
            ]
            return Credential(docType: mDLDocType, nameSpaces: [
                NameSpace(name: mDLNameSpace, elements: iso), NameSpace(name: aamvaNameSpace, elements: aamva),
            ])
        }
    }
}
