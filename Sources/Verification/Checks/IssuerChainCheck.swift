import Crypto
import MDoc

/// `issuer.chain`: the document signer in issuerAuth's x5chain chains, at the
/// verification time, to one of the tenant's trust anchors (IACA), and is not
/// an anchor itself.
enum IssuerChainCheck: DocumentCheck {
    static let name = CheckName.issuerChain
    static let reasons: [ReasonCode] = [.issuerUntrusted, .issuerCertificateInvalid]

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        let label = document.label
        let trustStore = document.context.trustStore
        do {
            let chain = try document.document.issuerSigned.issuerAuth.x5chain(context: "\(label) issuerAuth")
            guard let leaf = chain.first else {
                report.fail(name, .issuerUntrusted, "\(label): issuerAuth carries no x5chain certificate")
                return
            }
            document.signer = leaf
            let facts = leaf.facts
            document.summary.issuerSubject = facts.subjectDescription
            document.summary.issuerCountry = facts.subjectCountry
            switch trustStore.validate(leaf: leaf, intermediates: Array(chain.dropFirst()), at: document.context.time) {
            case .success where trustStore.isAnchorOnly(leaf):
                // A path of one: the anchor signed the MSO itself.
                report.fail(name, .issuerUntrusted,
                            "\(label): the document signer is a trust anchor itself; ISO 18013-5 requires a document signer issued by the IACA (pin a signer with pinnedDocumentSigners)")
            case .success:
                document.signerIsTrusted = true
                report.pass(name)
            case .failure(.untrusted(let detail)):
                report.fail(name, .issuerUntrusted, "\(label): \(detail)")
            case .failure(.certificateInvalid(let detail)):
                report.fail(name, .issuerCertificateInvalid, "\(label): \(detail)")
            }
        } catch {
            report.fail(name, .issuerCertificateInvalid, error.detail)
        }
    }
}
