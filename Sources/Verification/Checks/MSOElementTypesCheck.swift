import DocumentTypes

/// `mso.element_types`: each returned issuer-signed element that the
/// document catalogue types (docs/document-types.md) has that CBOR type: a
/// birth date that is a date, a portrait that is bytes, an `age_over_NN`
/// that is a boolean. The issuer signed the value, but a value of the wrong
/// type is not the element the standard defines, and an integration reading
/// it as one would be misled (a text where a boolean belongs reads as true
/// in many languages). Elements, namespaces and docTypes the catalogue does
/// not know are not checked.
enum MSOElementTypesCheck: DocumentCheck {
    static let name = CheckName.msoElementTypes
    static let reasons: [ReasonCode] = [.msoElementTypeMismatch]
    static let isRequiredForVerified = false

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard document.parsedMSO != nil, DocumentCatalogue.shared.documentType(document.document.docType) != nil else { return }
        var mismatches = FindingSummary()
        for (space, entries) in zip(document.document.issuerSigned.nameSpaces, document.catalogued) {
            for (item, entry) in zip(space.items, entries) {
                guard let element = entry, !element.type.admits(item.elementValue) else { continue }
                mismatches.add("\(space.name)/\(item.elementIdentifier) is not \(element.type.rawValue)")
            }
        }
        if mismatches.isEmpty {
            report.pass(name)
        } else {
            report.fail(name, .msoElementTypeMismatch, "\(document.label): \(mismatches.count) element(s) of the wrong type: \(mismatches.description)")
        }
    }
}
