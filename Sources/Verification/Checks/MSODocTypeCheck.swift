/// `mso.doctype`: the document claims exactly the docType the issuer signed,
/// compared by bytes (a lookalike docType is another docType).
enum MSODocTypeCheck: DocumentCheck {
    static let name = CheckName.msoDocType
    static let reasons: [ReasonCode] = [.msoDoctypeMismatch]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard let mso = document.parsedMSO else { return }
        let docType = document.document.docType
        if mso.docType.hasSameUTF8(as: docType) {
            report.pass(name)
        } else {
            report.fail(name, .msoDoctypeMismatch, "\(document.label): MSO docType \(mso.docType) differs from the document's \(docType)")
        }
    }
}
