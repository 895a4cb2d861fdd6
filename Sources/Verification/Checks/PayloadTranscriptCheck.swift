import CBOR
import Crypto
import MDoc

/// `payload.transcript` (iso-device-response): the supplied SessionTranscript
/// is one this flow can be answered under. A transcript names the exchange it
/// was made in, and the device's authentication covers it, so a transcript
/// made for another flow must not be accepted here:
///
/// - Apple's in-app handover (`AppleIdentityPresentment_1.0`) and the Digital
///   Credentials API's (`dcapi`, `OpenID4VPDCAPIHandover`) name a relying
///   party that Veridoc itself builds and checks in those flows (the tenant's
///   merchant, key and nonce; its origin and EncryptionInfo or response key).
///   Accepted here, a response the device bound to one tenant's merchant or
///   origin would verify for any tenant.
/// - The ISO 18013-5 proximity form must be well formed (DeviceEngagement with
///   its EDeviceKey, EReaderKey, a QR or NFC handover), and a supplied
///   `ephemeralReaderKey` must be the private half of its EReaderKey: the
///   reader key is what a device MAC is agreed with.
/// - An event of a Veridoc session (`sessionToken`) is a proximity reader's
///   answer (the session API's iso-device-response flow), so its transcript
///   must be of the proximity form.
///
/// OpenID4VP handovers (`[null, null, Handover]`) of the known shapes are
/// accepted as they are, unless the tenant refuses them
/// (`acceptOpenID4VPTranscripts`): they name the verifier that made the
/// request only through hashes of values Veridoc is not given, so Veridoc
/// cannot tell whether that verifier was this tenant's.
/// The check also fixes the transcript's canonical encoding, from which the
/// presentation's single-use identity is computed (`PresentationIdentity`).
enum PayloadTranscriptCheck: RequestCheck {
    static let name = CheckName.payloadTranscript
    static let reasons: [ReasonCode] = [.payloadMalformed, .transcriptFlowMismatch, .readerKeyMismatch]
    /// Skipped in the flows whose transcript Veridoc builds itself.
    static let isRequiredForVerified = false

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard case .isoDeviceResponse = request.request.input, let transcript = request.transcript else { return }
        let form: TranscriptForm
        do throws(MDocError) {
            // Decoded once for both: the form, and the canonical encoding the presentation's identity is made from.
            let limits = request.limits
            let item: CBORItem
            do { item = try CBORDecoder(limits: limits).decode(transcript.encoded) } catch { throw MDocError.malformed(describe(error)) }
            form = try TranscriptForm.of(item, limits: limits)
            request.canonicalTranscript = try CanonicalCBOR.encoding(of: item, limits: limits)
        } catch {
            report.fail(name, .payloadMalformed, "SessionTranscript: \(error.detail)")
            return
        }
        request.transcriptForm = form
        // The tenant's single use of this transcript goes by its items, not by the bytes a submitter chose.
        request.replayToken = request.canonicalTranscript
        switch form {
        case .appleIdentityPresentment, .digitalCredentialsAPI, .openID4VPDigitalCredentialsAPI:
            report.fail(name, .transcriptFlowMismatch,
                        "the SessionTranscript is of the \(form.name) flow, whose transcript Veridoc builds itself from the tenant's own request; "
                            + "it is never accepted as an iso-device-response transcript (send the wallet's answer through its own flow)")
        case .openID4VP where request.request.sessionToken != nil:
            report.fail(name, .transcriptFlowMismatch,
                        "the event answers a Veridoc session of the iso-device-response flow (a proximity reader), but its SessionTranscript is of the \(form.name) form")
        case .openID4VP where !(request.tenant?.acceptsOpenID4VPTranscripts ?? true):
            report.fail(name, .transcriptFlowMismatch,
                        "the SessionTranscript is of the \(form.name) form, which names a verifier Veridoc cannot check; "
                            + "this tenant accepts proximity transcripts only (acceptOpenID4VPTranscripts)")
        case .openID4VP:
            report.pass(name)
        case .proximity(let readerKey, _):
            if let supplied = request.readerKey, supplied.publicKey.uncompressedPoint != readerKey.uncompressedPoint {
                report.fail(name, .readerKeyMismatch, "ephemeralReaderKey is not the private key of the SessionTranscript's EReaderKey")
            } else {
                report.pass(name)
            }
        }
    }
}
