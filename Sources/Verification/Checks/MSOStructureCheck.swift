/// `mso.structure`: the signed MobileSecurityObject parses. Everything wrong
/// inside it, an unsupported digest algorithm or device key included, is the
/// issuer's malformed MSO.
enum MSOStructureCheck: DocumentCheck {
    static let name = CheckName.msoStructure
    static let reasons: [ReasonCode] = [.msoMalformed]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        switch document.mso {
        case .failure(let error):
            report.fail(name, .msoMalformed, "\(document.label): \(error.detail)")
        case .success(let mso):
            report.pass(name)
            document.summary.signed = mso.signed
            document.summary.validFrom = mso.validFrom
            document.summary.validUntil = mso.validUntil
        }
    }
}
