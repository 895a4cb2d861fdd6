import MDoc

/// `issuer.certificate`: the document signer has the ISO 18013-5 Annex B
/// profile, and signed the MSO within its own validity. A signer the operator
/// pinned on purpose (pinnedDocumentSigners) is trusted as it is: public
/// vectors and early wallets have signers without the Annex B extensions.
/// Every other signer, an anchor presented as one included, must have the profile.
enum IssuerCertificateCheck: DocumentCheck {
    static let name = CheckName.issuerCertificate
    static let reasons: [ReasonCode] = [.issuerCertificateInvalid]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard let signer = document.signer else {
            report.skip(name)
            return
        }
        let pinned = document.context.trustStore.isPinnedSigner(signer)
        var problems = pinned ? [] : signer.facts.documentSignerViolations
        if let mso = document.parsedMSO, mso.signed < signer.notBefore || mso.signed > signer.notAfter {
            problems.append("MSO signed \(RFC3339.string(from: mso.signed)) outside the document signer's validity")
        }
        if problems.isEmpty {
            report.pass(name)
        } else {
            report.fail(name, .issuerCertificateInvalid, "\(document.label): " + problems.joined(separator: ", "))
        }
    }
}
