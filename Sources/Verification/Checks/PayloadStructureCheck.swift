import CBOR
import Crypto
import Foundation
import MDoc

/// `payload.structure`: the flow's payload parses: Apple's envelope, the
/// Annex C response and EncryptionInfo, or a plain DeviceResponse with its
/// SessionTranscript (and reader key, for a deviceMac).
enum PayloadStructureCheck: RequestCheck {
    static let name = CheckName.payloadStructure
    static let reasons: [ReasonCode] = [.payloadMalformed, .payloadUnsupported]

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
