import Foundation
import JSON
import MDoc

/// `request.issued_nonce`: the nonce is one `veridoc serve` issued for this
/// tenant, flow and merchant or origin (`IssuedNonce`): the Apple nonce, the
/// Annex C EncryptionInfo nonce, or, for iso-device-response, whose
/// transcript holds no nonce of the server's, the event's `sessionToken`.
///
/// A nonce that opens hands its session and expiry to what follows: the age
/// check judges freshness by that expiry, not by the producer's `time`, and
/// the worker marks the session's status. A nonce that does not open fails
/// with `request.nonce_unknown` where the tenant requires issued nonces, or
/// where the event claims a session (`sessionToken`); otherwise it is the
/// integrator's own nonce, and the check does not apply (skipped).
enum RequestIssuedNonceCheck: RequestCheck {
    static let name = CheckName.requestIssuedNonce
    static let reasons: [ReasonCode] = [.requestNonceUnknown]
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let tenant = request.tenant, let (bytes, audience) = candidate(request) else { return }
        let claimed = tenant.requireIssuedNonces || request.request.sessionToken != nil
        guard let key = request.issuedNonceKey else {
            if claimed { report.fail(name, .requestNonceUnknown, "issued nonces cannot be checked here: replay.nonceKeyFile is not configured") }
            return
        }
        if bytes.isEmpty {
            report.fail(name, .requestNonceUnknown, "the event carries no sessionToken, and the tenant requires issued nonces")
            return
        }
        let binding = IssuedNonce.Binding(tenant: tenant.id, flow: request.request.flow, audience: audience)
        if let issued = key.open(bytes, binding: binding) {
            request.issuedNonce = issued
            report.pass(name)
        } else if claimed {
            report.fail(name, .requestNonceUnknown, "the nonce was not issued by Veridoc for this tenant, flow and \(audienceName(request.request.flow))")
        }
    }

    /// The nonce to check and the audience it must be bound to; nil while
    /// there is none yet (a web payload that did not parse).
    private static func candidate(_ request: RequestUnderVerification) -> ([UInt8], String)? {
        switch request.request.input {
        case .appleWalletApp(_, let nonce, _, let merchantID):
            return (nonce, merchantID)
        case .appleWalletWeb(_, _, let infoBytes, let origin):
            // From the parsed envelope, or on its own when the response did
            // not parse: the session still learns its end.
            if case .annexC(_, let info)? = request.envelope { return (Array(info.nonce), origin) }
            guard let info = try? AnnexCEncryptionInfo(bytes: infoBytes[...], limits: request.limits) else { return nil }
            return (Array(info.nonce), origin)
        case .openID4VPDCAPI(let origin, let nonce, _, _):
            // Veridoc's nonces go out as base64url text; any other text is the integrator's own.
            return (Base64.decodeURLUnpadded(nonce) ?? Array(nonce.utf8), origin)
        case .isoDeviceResponse:
            // No token where the tenant does not require one: the integrator's own event.
            if let token = request.request.sessionToken { return (token, "") }
            return request.tenant?.requireIssuedNonces == true ? ([], "") : nil
        }
    }

    private static func audienceName(_ flow: Flow) -> String {
        switch flow {
        case .appleWalletApp: "merchant"
        case .appleWalletWeb, .openID4VPDCAPI: "origin"
        case .isoDeviceResponse: "session"
        }
    }
}
