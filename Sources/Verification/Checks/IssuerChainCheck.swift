import Crypto
import MDoc

/// `issuer.chain`: the document signer in issuerAuth's x5chain chains, at the
/// verification time, to one of the tenant's trust anchors (IACA), and is not
/// an anchor itself. An IACA the tenant trusts only through VICALs is trusted
/// while one of them is fresh (before its nextUpdate plus grace); Apple's test
/// issuer is trusted by a test tenant only.
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
            case .success(let path):
                let context = document.context
                if context.refusesTestIssuers, let test = path.lazy.compactMap(KnownTestIssuers.name(of:)).first {
                    report.fail(name, .issuerUntrusted, "\(label): the path runs through Apple's test issuer \"\(test)\", which only a test tenant trusts")
                } else if let anchor = path.last,
                          case .stale(let lists) = context.anchorScopes.decision(anchor: anchor, docTypes: [], at: context.time) {
                    report.fail(name, .issuerUntrusted, "\(label): its IACA is trusted only through \(lists.joined(separator: ", ")), past nextUpdate")
                } else {
                    document.signerIsTrusted = true
                    document.path = path
                    report.pass(name)
                }
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
