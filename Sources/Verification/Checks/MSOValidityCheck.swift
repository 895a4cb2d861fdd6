import MDoc

/// `mso.validity`: the verification time lies within the MSO's validFrom and validUntil.
enum MSOValidityCheck: DocumentCheck {
    static let name = CheckName.msoValidity
    static let reasons: [ReasonCode] = [.msoNotYetValid, .msoExpired]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard let mso = document.parsedMSO else { return }
        let time = document.context.time
        if time < mso.validFrom {
            report.fail(name, .msoNotYetValid,
                        "\(document.label): MSO validFrom \(RFC3339.string(from: mso.validFrom)) is after verification time \(RFC3339.string(from: time))")
        } else if time > mso.validUntil {
            report.fail(name, .msoExpired,
                        "\(document.label): MSO validUntil \(RFC3339.string(from: mso.validUntil)) is before verification time \(RFC3339.string(from: time))")
        } else {
            report.pass(name)
        }
    }
}
