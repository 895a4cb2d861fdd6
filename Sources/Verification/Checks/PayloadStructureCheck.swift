import CBOR
import Crypto
import Foundation
import JOSE
import MDoc

/// `payload.structure`: the flow's payload parses: Apple's envelope, the
/// Annex C response and EncryptionInfo, a plain DeviceResponse with its
/// SessionTranscript (and reader key, for a deviceMac), or OpenID4VP's JWE
/// or clear vp_token. An OpenID4VP error response (the wallet declined or
/// failed, inside a fulfilled promise) is the wallet's answer, not a
/// malformed one: `response.wallet_error` with its code.
enum PayloadStructureCheck: RequestCheck {
    static let name = CheckName.payloadStructure
    static let reasons: [ReasonCode] = [.payloadMalformed, .payloadUnsupported, .responseWalletError]

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard request.tenant != nil else { return }
        let limits = request.limits
        switch request.request.input {
        case .appleWalletApp(let payload, let nonce, _, _):
            request.replayToken = nonce
            do {
                request.envelope = .apple(try AppleEnvelope(bytes: payload[...], limits: limits))
                report.pass(name)
            } catch {
                report.fail(name, RequestUnderVerification.payloadReason(error, "Apple envelope"))
            }
        case .appleWalletWeb(let response, _, let encryptionInfoBytes, _):
            do {
                let encrypted = try AnnexCEncryptedResponse(bytes: response[...], limits: limits)
                let info = try AnnexCEncryptionInfo(bytes: encryptionInfoBytes[...], limits: limits)
                request.envelope = .annexC(encrypted, info)
                report.pass(name)
                request.replayToken = Array(info.nonce)
            } catch {
                report.fail(name, RequestUnderVerification.payloadReason(error, "Annex C response"))
            }
        case .openID4VPDCAPI(_, let nonce, let response, let queryID):
            // Labelled: another flow's nonce of the same bytes is not this one's.
            request.replayToken = Array("openid4vp-dc-api\u{0}".utf8) + Array(nonce.utf8)
            switch response {
            case .walletError(let code):
                report.fail(name, .responseWalletError, "the wallet answered with OpenID4VP error \(code) instead of a presentation")
            case .encrypted(let compact):
                do throws(JOSEError) {
                    request.envelope = .jwe(try CompactJWE(compact: compact))
                    report.pass(name)
                } catch {
                    report.fail(name, RequestUnderVerification.payloadReason(error, "JWE"))
                }
            case .unencrypted(let token):
                guard request.tenant?.acceptsUnencryptedOpenID4VP == true else {
                    report.fail(name, .payloadUnsupported, "the response is in the clear (dc_api); this tenant accepts only responses encrypted to it (dc_api.jwt, acceptUnencryptedOpenID4VP)")
                    return
                }
                switch VPToken.deviceResponse(in: token, credentialQueryID: queryID) {
                case .success(let bytes):
                    request.envelope = .vpToken(bytes)
                    report.pass(name)
                case .failure(.malformed(let detail)), .failure(.walletError(let detail)):
                    report.fail(name, .payloadMalformed, detail)
                }
            }
        case .isoDeviceResponse(let payload, let transcriptBytes, let readerKeyBytes):
            do {
                let transcript = try SessionTranscript(received: transcriptBytes, limits: limits)
                request.transcript = transcript
                if let readerKeyBytes {
                    guard let key = readerKey(readerKeyBytes) else { throw MDocError.malformed("ephemeralReaderKey is neither a P-256 scalar nor a DER private key") }
                    request.readerKey = key
                }
                request.envelope = .plain(try CBORDecoder(limits: limits).decode(payload))
                report.pass(name)
                request.replayToken = transcript.encoded
            } catch {
                report.fail(name, RequestUnderVerification.payloadReason(error, "DeviceResponse"))
            }
        }
    }

    /// A raw 32-byte P-256 scalar, or a PKCS#8 / SEC 1 DER private key.
    static func readerKey(_ bytes: [UInt8]) -> PrivateKey? {
        if bytes.count == 32 { return try? PrivateKey(curve: .p256, scalar: bytes) }
        let body = Data(bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        for label in ["PRIVATE KEY", "EC PRIVATE KEY"] {
            if let key = try? PrivateKey(pem: "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n") { return key }
        }
        return nil
    }
}
