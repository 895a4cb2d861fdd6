import Crypto
import MDoc

/// `decryption.transcript`: Apple's envelope names the session transcript
/// (infoHash) this request rebuilds from its nonce, merchant ID, team ID and
/// key. Checked before decrypting, as Apple does, so that a wrong input is
/// named instead of surfacing as an anonymous AEAD failure. The web flows'
/// transcripts are built here too, but have no hash to check against:
/// OpenID4VP's binds the origin, the nonce and the thumbprint of the key the
/// response was encrypted to (null in the clear).
enum DecryptionTranscriptCheck: RequestCheck {
    static let name = CheckName.decryptionTranscript
    static let reasons: [ReasonCode] = [.decryptionTranscriptMismatch]
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let tenant = request.tenant else { return }
        switch request.request.input {
        case .openID4VPDCAPI(let origin, let nonce, _, _):
            switch request.envelope {
            case .jwe?:
                guard let key = request.key else { return }
                request.transcript = SessionTranscript.openID4VPDigitalCredentialsAPI(origin: origin, nonce: nonce, jwkThumbprint: key.thumbprint)
            case .vpToken?:
                request.transcript = SessionTranscript.openID4VPDigitalCredentialsAPI(origin: origin, nonce: nonce, jwkThumbprint: nil)
            default:
                return
            }
        case .appleWalletApp(_, let nonce, let nonceText, let merchantID):
            guard let key = request.key else { return }
            guard case .apple(let envelope) = request.envelope else { return }
            let teamID = tenant.teamID ?? ""
            let transcript = SessionTranscript.appleWalletApp(nonce: nonce, merchantID: merchantID, teamID: teamID, recipientKeyHash: key.keyHash)
            guard sha256(transcript.encoded) == envelope.infoHash else {
                let diagnosis = TranscriptDiagnosis.apple(
                    infoHash: envelope.infoHash, nonce: nonce, nonceText: nonceText, merchantID: merchantID, teamID: teamID,
                    keyHash: key.keyHash, tenant: tenant)
                report.fail(name, .decryptionTranscriptMismatch, diagnosis)
                return
            }
            report.pass(name)
            request.transcript = transcript
        case .appleWalletWeb(_, let encryptionInfo, _, let origin):
            guard request.key != nil else { return }
            request.transcript = SessionTranscript.digitalCredentialsAPI(encryptionInfo: encryptionInfo, origin: origin)
        case .isoDeviceResponse:
            return
        }
    }
}
