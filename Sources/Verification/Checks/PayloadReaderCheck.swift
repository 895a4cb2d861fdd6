import Crypto
import Foundation

/// `payload.reader` (iso-device-response with `readerAuthentication`): the
/// reader that ran the session is one the tenant registered, and it signed
/// this very submission recently (`ReaderAttestation`). Its success is what
/// lets a device MAC count (`device.authentication`); a submission that
/// names a reader and fails is rejected whatever the document's
/// authentication, since it claims something untrue.
enum PayloadReaderCheck: RequestCheck {
    static let name = CheckName.payloadReader
    static let reasons: [ReasonCode] = [.readerUnauthenticated]
    /// Skipped when the submission names no reader.
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let attestation = request.request.readerAuthentication, let tenant = request.tenant,
              case .isoDeviceResponse(let payload, let transcript, let readerKey) = request.request.input
        else { return }
        guard let key = tenant.readerKey(attestation.readerID) else {
            report.fail(name, .readerUnauthenticated, "reader \(attestation.readerID) is not registered for this tenant (tenant setting readers)")
            return
        }
        let signed = ReaderAttestation.signedBytes(
            tenant: tenant.id, readerID: attestation.readerID, signedAtText: attestation.signedAtText, response: payload, transcript: transcript,
            readerKey: readerKey)
        guard attestation.signature.count == 64, key.isValidSignature(attestation.signature, for: signed, hash: .sha256) else {
            report.fail(name, .readerUnauthenticated,
                        "the reader signature does not verify with reader \(attestation.readerID)'s registered key over this submission")
            return
        }
        if request.isTimely(attestation.signedAt, maxAge: tenant.maxRequestAge, issued: "the reader signed", signedTime: "the reader's signing time",
                            failing: name, .readerUnauthenticated, into: &report) {
            report.pass(name)
            request.authenticatedReader = attestation.readerID
        }
    }
}
