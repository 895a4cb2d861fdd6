import Crypto
import Foundation

/// Who may sign the list a document names: the decision is made here, once,
/// because the drafts leave it open.
///
/// The trust must come from the document's own issuer. A list signer is
/// accepted only through a path to `issuingAnchor`, the IACA that issued the
/// document signer (the end of the document's validated path), never merely
/// through some anchor the tenant trusts: another issuer's IACA must not be
/// able to revoke, or un-revoke, this issuer's documents.
///
/// 1. The reference (the MSO's StatusListInfo or IdentifierListInfo) names a
///    `certificate`. The issuer signed that choice in the MSO, so the token
///    must be signed by exactly that certificate's key, and the certificate
///    must chain to `issuingAnchor` at `time` (ISO leaves who issues it
///    open; the same IACA is the one authority this document already
///    rests on). A token `x5chain`, if any, must name that certificate as
///    its leaf; its other certificates may serve as intermediates.
/// 2. Otherwise the token's `x5chain` names the signer (mdoc-ts reads ISO
///    18013-5 §12.3.6.3 as requiring it in the protected header; it is
///    accepted in either header, as for issuerAuth, since the signature
///    does not depend on it and the certificate must chain regardless).
///    Its leaf must chain to `issuingAnchor` at `time` and be either the
///    document signer itself (the draft's "Key Resolution and Trust
///    Management": the same key as the Referenced Token's) or a list
///    signer (`ListSignerProfile`).
///
/// In both cases the IACA itself is refused as the signer: ISO 18013-5
/// Annex B lets an IACA sign certificates and CRLs, nothing else. The one
/// anchor that may sign is a pinned document signer (a path of one, the
/// signer its own anchor), for its own documents' lists: it is trusted as
/// it is, for lists as for MSOs.
/// A token without `x5chain` and a reference without a certificate have no
/// signer to check: refused.
public enum ListSignerRule {
    /// The certificate whose key must have signed `token`, or `.signer` with why not.
    public static func authorize(token: ListToken, referenceCertificate: [UInt8]?, documentSigner: Certificate,
                                 issuingAnchor: Certificate, at time: Date) -> Result<Certificate, StatusListError> {
        let trustStore = TrustStore(anchors: [issuingAnchor])
        if let referenceCertificate {
            let named: Certificate
            do {
                named = try Certificate.cached(der: referenceCertificate)
            } catch {
                return .failure(.signer("the certificate the document names for its list is not DER X.509"))
            }
            if let leaf = token.signerChain.first, leaf != named {
                return .failure(.signer("the token's x5chain names another signer than the certificate the document names"))
            }
            if let problem = pathProblem(named, intermediates: Array(token.signerChain.dropFirst()), anchor: issuingAnchor,
                                         documentSigner: documentSigner, trustStore: trustStore, at: time) {
                return .failure(.signer("the certificate the document names for its list \(problem)"))
            }
            return .success(named)
        }
        guard let leaf = token.signerChain.first else {
            return .failure(.signer("the token has no x5chain and the document names no list signer certificate"))
        }
        if let problem = pathProblem(leaf, intermediates: Array(token.signerChain.dropFirst()), anchor: issuingAnchor,
                                     documentSigner: documentSigner, trustStore: trustStore, at: time) {
            return .failure(.signer("the token's signer \(problem)"))
        }
        if leaf == documentSigner { return .success(leaf) }
        let violations = ListSignerProfile.violations(of: leaf)
        guard violations.isEmpty else {
            return .failure(.signer("the token's signer is neither the document signer nor a list signer: \(violations.joined(separator: "; "))"))
        }
        return .success(leaf)
    }

    /// Why `certificate` is not a signer under `anchor` at `time`; nil when it is.
    private static func pathProblem(_ certificate: Certificate, intermediates: [Certificate], anchor: Certificate,
                                    documentSigner: Certificate, trustStore: TrustStore, at time: Date) -> String? {
        if certificate == anchor, certificate != documentSigner { return "is the IACA itself, which signs certificates, not lists" }
        switch trustStore.validate(leaf: certificate, intermediates: intermediates, at: time) {
        case .success:
            return nil
        case .failure(.untrusted(let detail)):
            return "does not chain to the IACA that issued the document signer: \(detail)"
        case .failure(.certificateInvalid(let detail)):
            return "is not valid on its path to the document's IACA: \(detail)"
        }
    }
}
