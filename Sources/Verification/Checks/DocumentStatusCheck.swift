import Crypto
import MDoc
/// `document.status`: the issuer has not revoked or suspended the document
/// (its MSO's `status` names a status list or identifier list), and no
/// certificate of its path is on the CRL its issuer publishes.
///
/// Lists are fetched over the network, which the verification pool never
/// waits on, so this check runs in two halves. In its place in the order it
/// only reads the reference, and only from a document whose issuer chain,
/// issuer signature and validity passed: until then the URI is the sender's,
/// not the issuer's. The status service then resolves the queries and
/// records the check (`VerificationResult.recordingStatus`); until it has,
/// the result cannot be accepted.
public enum DocumentStatusCheck: DocumentCheck {
    public static let name = CheckName.documentStatus
    public static let reasons: [ReasonCode] = [.statusRevoked, .statusSuspended, .statusUndetermined]
    public static let isRequiredForVerified = false

    static func run(_ document: inout DocumentUnderVerification, into report: inout CheckReport) {
        guard let mso = document.parsedMSO else { return }
        let reference = mso.status.flatMap { $0.hasReference ? $0 : nil } ?? MSOStatus()
        let policy = document.context.statusPolicy
        let vouched = [CheckName.issuerChain, .issuerSignature, .msoStructure, .msoValidity].allSatisfy { report.status(of: $0) == .passed }
        guard vouched, document.signerIsTrusted, let signer = document.signer, let anchor = document.path.last else {
            // Nothing was checked; "none" only where nothing names a list
            // (whether a path's certificates name CRLs is known only from a
            // trusted path, so a signer that names one leaves it open).
            if !reference.hasReference, document.signer.map(Self.namesNoCRL) ?? true {
                document.summary.status = CredentialStatus.none
            } else if policy.mode == .off {
                document.summary.status = .notChecked
            }
            return
        }
        let query = StatusQuery(document: document.index, reference: reference, documentSigner: signer, issuingAnchor: anchor, policy: policy,
                                path: document.path)
        guard query.hasReferences else {
            document.summary.status = CredentialStatus.none
            return
        }
        if policy.mode == .off {
            document.summary.status = .notChecked
            return
        }
        document.statusQuery = query
    }

    private static func namesNoCRL(_ certificate: Certificate) -> Bool {
        (try? certificate.facts.crlDistributionPoints.get())?.isEmpty == true
    }

    /// `report` with the check recorded for the answers to `queries` (in the same order).
    static func recording(_ answers: [CredentialStatus], for queries: [StatusQuery], in report: CheckReport) -> CheckReport {
        var report = report
        for (query, answer) in zip(queries, answers) {
            let label = "document \(query.document)"
            switch answer {
            case .revoked:
                report.fail(name, .statusRevoked, "\(label): its issuer has revoked it")
            case .suspended:
                report.fail(name, .statusSuspended, "\(label): its issuer has suspended it")
            case .undetermined(let cause) where query.policy.mode == .required:
                report.fail(name, .statusUndetermined, "\(label): \(cause.step): \(cause.detail)")
            case .undetermined, .valid:
                report.pass(name)
            case .none, .notChecked:
                break
            }
        }
        return report
    }
}
