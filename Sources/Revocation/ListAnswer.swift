import Crypto
import Foundation
import MDoc
import StatusList
import Verification

/// What one list says of one reference, at the verification time: the
/// token's own time rules and `sub`, the signer rule for the document's
/// issuer, then the entry. An index past the end and a status value other
/// than VALID, INVALID and SUSPENDED say nothing, so they are undetermined,
/// never valid.
enum ListAnswer {
    static func statusList(_ reference: MSOStatus.StatusListReference, in list: CachedList, for query: StatusQuery,
                           at time: Date, allowedClockSkew: TimeInterval) -> CredentialStatus {
        answer(list, uri: reference.uri, certificate: reference.certificate, query: query, at: time, skew: allowedClockSkew) { token in
            guard let bits = token.statusList else { return .undetermined(StatusUndetermined(step: "claims", detail: "the token holds no status list")) }
            guard let value = bits.status(at: reference.index) else {
                return .undetermined(StatusUndetermined(step: "index", detail: "the document's index lies past the end of its status list"))
            }
            switch value {
            case 0: return .valid
            case 1: return .revoked
            case 2: return .suspended
            default: return .undetermined(StatusUndetermined(step: "value", detail: "the list gives a status other than valid, invalid or suspended"))
            }
        }
    }

    static func identifierList(_ reference: MSOStatus.IdentifierListReference, in list: CachedList, for query: StatusQuery,
                               at time: Date, allowedClockSkew: TimeInterval) -> CredentialStatus {
        answer(list, uri: reference.uri, certificate: reference.certificate, query: query, at: time, skew: allowedClockSkew) { token in
            guard let identifiers = token.identifiers else {
                return .undetermined(StatusUndetermined(step: "claims", detail: "the token holds no identifier list"))
            }
            return identifiers.contains(reference.id) ? .revoked : .valid
        }
    }

    /// `lookup` of the token, once the token may speak for this document at `time`.
    private static func answer(_ list: CachedList, uri: String, certificate: [UInt8]?, query: StatusQuery, at time: Date, skew: TimeInterval,
                               lookup: (ListToken) -> CredentialStatus) -> CredentialStatus {
        guard let token = list.token else { return .undetermined(StatusUndetermined(step: "token", detail: "a CRL was found where a list token was expected")) }
        do {
            try token.checkSubject(uri)
            try token.checkValidity(at: time, allowedClockSkew: skew)
        } catch {
            return .undetermined(StatusUndetermined(error))
        }
        if let problem = list.authorization(for: query, referenceCertificate: certificate, at: time) { return .undetermined(problem) }
        return lookup(token)
    }

    /// What the CRL fetched from `uri` says of the certificate `reference`
    /// names (RFC 5280 §6.3.3, for a complete CRL of the certificate's own
    /// issuer): current at `time` (`thisUpdate` no later than `time` and the
    /// skew, `time` before `nextUpdate`), its issuer's, covering this
    /// certificate; then its entry. `certificateHold` is suspended.
    static func certificate(_ reference: CertificateListReference, uri: String, in list: CachedList, at time: Date,
                            allowedClockSkew: TimeInterval) -> CredentialStatus {
        let who = reference.role.rawValue
        guard case .crl(let crl) = list.content else {
            return .undetermined(StatusUndetermined(step: "crl", detail: "a list token was found where \(who)'s CRL was expected"))
        }
        guard crl.thisUpdate <= time.addingTimeInterval(allowedClockSkew) else {
            return .undetermined(StatusUndetermined(step: "crl_time", detail: "\(who)'s CRL is issued after the verification time, beyond the allowed clock skew"))
        }
        guard time < crl.nextUpdate else {
            return .undetermined(StatusUndetermined(step: "crl_time", detail: "\(who)'s CRL is past its nextUpdate"))
        }
        if let problem = list.authorization(ofCRLBy: reference.issuer, at: time) {
            return .undetermined(StatusUndetermined(step: problem.step, detail: "\(who)'s CRL: \(problem.detail)"))
        }
        if let problem = crl.scopeProblem(for: reference.certificate, pointNames: reference.distributionPointNames.isEmpty ? [uri] : reference.distributionPointNames) {
            // The IACA is trusted by the tenant's configuration, not by a
            // CRL: its own CRL covering only the certificates it issued says
            // nothing about it, and must not reject every document it issued.
            if reference.role == .authority && reference.certificate == reference.issuer { return .valid }
            return .undetermined(StatusUndetermined(step: "crl_scope", detail: "\(who)'s CRL: \(problem)"))
        }
        let entry: CertificateRevocationList.Entry?
        do {
            entry = try crl.entry(for: reference.certificate)
        } catch {
            return .undetermined(StatusUndetermined(step: "crl", detail: "\(who)'s serial number is longer than a CRL may list"))
        }
        switch entry {
        case nil: return .valid
        case .revoked: return .revoked
        case .onHold: return .suspended
        case .removed:
            return .undetermined(StatusUndetermined(step: "crl", detail: "\(who)'s CRL lists it as removeFromCRL, which only a delta CRL may say"))
        }
    }
}
