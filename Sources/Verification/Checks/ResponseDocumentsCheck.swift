import CBOR
import MDoc

import JSON

/// `response.documents`: the (decrypted) DeviceResponse parses, reports no
/// error status and holds documents. A decrypted OpenID4VP response is
/// `{"vp_token": ...}` first, or an error response sealed like one.
enum ResponseDocumentsCheck: RequestCheck {
    static let name = CheckName.responseDocuments
    static let reasons: [ReasonCode] = [.responseNoDocuments, .payloadMalformed, .payloadUnsupported, .responseWalletError]

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let response = parse(&request, into: &report) else { return }
        // ISO 18013-5 status 10–12: the device reports an error and returns no data. Status is
        // outside every signature, so documents beside it are not trusted to be what the holder sent.
        guard response.status == 0 else {
            report.fail(name, .responseNoDocuments, "DeviceResponse status \(response.status) reports an error; its documents are not read")
            return
        }
        guard !response.documents.isEmpty else {
            report.fail(name, .responseNoDocuments, "DeviceResponse has no documents (status \(response.status))")
            return
        }
        report.pass(name)
        request.response = response
    }

    private static func parse(_ request: inout RequestUnderVerification, into report: inout CheckReport) -> DeviceResponse? {
        let limits = request.limits
        switch request.envelope {
        case .apple:
            guard let plaintext = request.plaintext else { return nil }
            do {
                return try AppleEnvelope.deviceResponse(inPlaintext: plaintext, limits: limits)
            } catch {
                report.fail(name, RequestUnderVerification.payloadReason(error, "decrypted Apple plaintext"))
            }
        case .jwe:
            guard let plaintext = request.plaintext else { return nil }
            switch VPToken.deviceResponse(decrypted: plaintext, credentialQueryID: request.request.credentialQueryID) {
            case .success(let bytes):
                return deviceResponse(bytes, "vp_token's DeviceResponse", request: request, into: &report)
            case .failure(.walletError(let code)):
                report.fail(name, .responseWalletError, "the wallet answered with OpenID4VP error \(code) instead of a presentation")
            case .failure(.malformed(let detail)):
                report.fail(name, .payloadMalformed, detail)
            }
        case .vpToken(let bytes):
            return deviceResponse(bytes, "vp_token's DeviceResponse", request: request, into: &report)
        case .annexC:
            guard let plaintext = request.plaintext else { return nil }
            return deviceResponse(plaintext, "decrypted DeviceResponse", request: request, into: &report)
        case .plain(let item):
            do {
                return try DeviceResponse(item, limits: limits)
            } catch {
                report.fail(name, RequestUnderVerification.payloadReason(error, "DeviceResponse"))
            }
        case nil:
            return nil
        }
        return nil
    }

    /// A bare DeviceResponse (Annex C's plaintext, OpenID4VP's presentation).
    private static func deviceResponse(_ bytes: [UInt8], _ what: String, request: RequestUnderVerification, into report: inout CheckReport) -> DeviceResponse? {
        if let response = DeviceResponse.commonForm(bytes[...], limits: request.limits) { return response }
        do {
            return try DeviceResponse(try CBORDecoder(limits: request.limits).decode(bytes), limits: request.limits)
        } catch {
            report.fail(name, RequestUnderVerification.payloadReason(error, what))
            return nil
        }
    }
}
