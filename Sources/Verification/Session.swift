import CBOR
import Crypto
import Foundation
import MDoc

/// One request's way from payload to DeviceResponse: parse the envelope, find
/// the tenant key, rebuild the session transcript, decrypt. Each flow does
/// these steps its own way; all report into the same named checks.
struct Session {
    let request: VerificationRequest
    let tenant: Tenant
    let time: Date
    let limits: CBORDecoder.Limits
    private(set) var transcript: SessionTranscript?
    private(set) var readerKey: PrivateKey?
    private(set) var replayToken: [UInt8]?

    init(request: VerificationRequest, tenant: Tenant, time: Date, limits: CBORDecoder.Limits) {
        self.request = request
        self.tenant = tenant
        self.time = time
        self.limits = limits
    }

    /// Runs the payload, decryption and response-structure checks; the
    /// DeviceResponse when they got that far.
    mutating func openResponse(into report: inout CheckReport) -> DeviceResponse? {
        switch request.input {
        case .appleWalletApp(let payload, let nonce, let nonceText, let merchantID):
            replayToken = nonce
            return openApple(payload: payload, nonce: nonce, nonceText: nonceText, merchantID: merchantID, into: &report)
        case .appleWalletWeb(let response, let encryptionInfo, let encryptionInfoBytes, let origin):
            return openAnnexC(response: response, encryptionInfo: encryptionInfo, encryptionInfoBytes: encryptionInfoBytes, origin: origin, into: &report)
        case .isoDeviceResponse(let payload, let transcriptBytes, let readerKeyBytes):
            return openPlain(payload: payload, transcriptBytes: transcriptBytes, readerKeyBytes: readerKeyBytes, into: &report)
        }
    }

    // MARK: apple-wallet-app

    private mutating func openApple(payload: [UInt8], nonce: [UInt8], nonceText: String, merchantID: String, into report: inout CheckReport) -> DeviceResponse? {
        let envelope: AppleEnvelope
        do {
            envelope = try AppleEnvelope(bytes: payload[...], limits: limits)
            report.pass(.payloadStructure)
        } catch {
            report.fail(.payloadStructure, payloadReason(error, "Apple envelope"))
            return nil
        }
        guard let key = tenant.key(withHash: envelope.recipientKeyHash) else {
            report.fail(.decryptionKey, .decryptionUnknownKey, "pkRHash names none of tenant \(tenant.id)'s \(tenant.keys.count) encryption keys")
            return nil
        }
        report.pass(.decryptionKey)
        let teamID = tenant.teamID ?? ""
        let transcript = SessionTranscript.appleWalletApp(nonce: nonce, merchantID: merchantID, teamID: teamID, recipientKeyHash: key.keyHash)
        // Apple's order: match infoHash before decrypting, so a wrong input is
        // named instead of surfacing as an anonymous AEAD failure.
        guard sha256(transcript.encoded) == envelope.infoHash else {
            let diagnosis = TranscriptDiagnosis.apple(
                infoHash: envelope.infoHash, nonce: nonce, nonceText: nonceText, merchantID: merchantID, teamID: teamID,
                keyHash: key.keyHash, tenant: tenant)
            report.fail(.decryptionTranscript, .decryptionTranscriptMismatch, diagnosis)
            return nil
        }
        report.pass(.decryptionTranscript)
        self.transcript = transcript
        guard let plaintext = open(envelope.ciphertext, encapsulatedKey: envelope.ephemeralPublicKey, transcript: transcript, key: key, into: &report) else {
            return nil
        }
        do {
            return try AppleEnvelope.deviceResponse(inPlaintext: plaintext, limits: limits)
        } catch {
            report.fail(.responseDocuments, payloadReason(error, "decrypted Apple plaintext"))
            return nil
        }
    }

    // MARK: apple-wallet-web (ISO 18013-7 Annex C)

    private mutating func openAnnexC(
        response: [UInt8], encryptionInfo: String, encryptionInfoBytes: [UInt8], origin: String, into report: inout CheckReport
    ) -> DeviceResponse? {
        let encrypted: AnnexCEncryptedResponse
        let info: AnnexCEncryptionInfo
        do {
            encrypted = try AnnexCEncryptedResponse(bytes: response[...], limits: limits)
            info = try AnnexCEncryptionInfo(bytes: encryptionInfoBytes[...], limits: limits)
            report.pass(.payloadStructure)
        } catch {
            report.fail(.payloadStructure, payloadReason(error, "Annex C response"))
            return nil
        }
        replayToken = Array(info.nonce)
        guard let point = info.recipientPublicKey.uncompressedPoint, let key = tenant.key(withPublicPoint: point) else {
            report.fail(.decryptionKey, .decryptionUnknownKey, "EncryptionInfo's recipientPublicKey is none of tenant \(tenant.id)'s encryption keys")
            return nil
        }
        report.pass(.decryptionKey)
        let transcript = SessionTranscript.digitalCredentialsAPI(encryptionInfo: encryptionInfo, origin: origin)
        self.transcript = transcript
        guard let plaintext = open(encrypted.ciphertext, encapsulatedKey: encrypted.encapsulatedKey, transcript: transcript, key: key, into: &report) else {
            return nil
        }
        if let response = DeviceResponse.commonForm(plaintext[...], limits: limits) {
            return response
        }
        do {
            let item = try CBORDecoder(limits: limits).decode(plaintext)
            return try parseResponse(item, into: &report)
        } catch {
            report.fail(.responseDocuments, payloadReason(error, "decrypted DeviceResponse"))
            return nil
        }
    }

    // MARK: iso-device-response

    private mutating func openPlain(payload: [UInt8], transcriptBytes: [UInt8], readerKeyBytes: [UInt8]?, into report: inout CheckReport) -> DeviceResponse? {
        let response: CBORItem
        do {
            transcript = try SessionTranscript(received: transcriptBytes, limits: limits)
            if let readerKeyBytes {
                guard let key = Self.readerKey(readerKeyBytes) else { throw MDocError.malformed("ephemeralReaderKey is neither a P-256 scalar nor a DER private key") }
                readerKey = key
            }
            response = try CBORDecoder(limits: limits).decode(payload)
            report.pass(.payloadStructure)
        } catch {
            report.fail(.payloadStructure, payloadReason(error, "DeviceResponse"))
            return nil
        }
        replayToken = transcript?.encoded
        do {
            return try parseResponse(response, into: &report)
        } catch {
            report.fail(.responseDocuments, payloadReason(error, "DeviceResponse"))
            return nil
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

    // MARK: shared steps

    private func open(_ ciphertext: ArraySlice<UInt8>, encapsulatedKey: [UInt8], transcript: SessionTranscript, key: TenantKey, into report: inout CheckReport) -> [UInt8]? {
        do {
            let plaintext = try HPKE.open(ciphertext, encapsulatedKey: encapsulatedKey, info: transcript.encoded, recipient: key.privateKey)
            report.pass(.decryptionOpen)
            return plaintext
        } catch .authenticationFailed {
            report.fail(.decryptionOpen, .decryptionFailed, "HPKE authentication failed: the ciphertext was not sealed to this key and session transcript, or was altered")
        } catch {
            report.fail(.decryptionOpen, .decryptionFailed, "HPKE encapsulated key is not a valid P-256 public key")
        }
        return nil
    }

    private func parseResponse(_ item: CBORItem, into report: inout CheckReport) throws(MDocError) -> DeviceResponse {
        try DeviceResponse(item, limits: limits)
    }

    private func payloadReason(_ error: any Error, _ what: String) -> Reason {
        switch error {
        case let error as MDocError:
            Reason(error.isUnsupported ? .payloadUnsupported : .payloadMalformed, "\(what): \(error.detail)")
        case let error as CBORError:
            Reason(.payloadMalformed, "\(what): \(describe(error))")
        default:
            Reason(.payloadMalformed, "\(what) is malformed")
        }
    }
}
