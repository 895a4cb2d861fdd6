import Crypto
import Foundation
import MDoc
import Verification

/// Who signs one session's requests: of each rotation the tenant holds, the
/// signer whose certificates stay valid until the session ends, since a
/// request signed by one that expires first is one a wallet may refuse
/// while the session still waits.
struct SessionSigners {
    /// Signs the web flow's DeviceRequest; nil: it goes unsigned (a test tenant).
    var webReader: ReaderSigner?
    /// Signs the OpenID4VP request object; nil: it goes unsigned where the tenant allows.
    var openID4VPVerifier: OpenID4VPVerifierIdentity?

    static func choose(for flow: Flow, config: Tenant, from start: Date, through end: Date) throws(SessionError) -> SessionSigners {
        var chosen = SessionSigners()
        if flow == .appleWalletWeb, let rotation = config.webReader {
            guard let signer = rotation.signer(from: start, through: end) else { throw .certificateExpired("webReader") }
            chosen.webReader = signer
        }
        // A web session offers OpenID4VP too, where the tenant makes such requests.
        let offersOpenID4VP = flow == .openID4VPDCAPI || (flow == .appleWalletWeb && config.webSessionsOfferOpenID4VP)
        if offersOpenID4VP, let rotation = config.openID4VPVerifier {
            guard let signer = rotation.signer(from: start, through: end) else { throw .certificateExpired("openID4VPVerifier") }
            chosen.openID4VPVerifier = signer
        }
        return chosen
    }
}
