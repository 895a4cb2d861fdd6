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
        do {
            try list.token.checkSubject(uri)
            try list.token.checkValidity(at: time, allowedClockSkew: skew)
        } catch {
            return .undetermined(StatusUndetermined(error))
        }
        if let problem = list.authorization(for: query, referenceCertificate: certificate, at: time) { return .undetermined(problem) }
        return lookup(list.token)
    }
}
