import CBOR
import MDoc

/// `response.documents`: the (decrypted) DeviceResponse parses, reports no
/// error status and holds documents.
enum ResponseDocumentsCheck: RequestCheck {
    static let name = CheckName.responseDocuments
    static let reasons: [ReasonCode] = [.responseNoDocuments, .payloadMalformed, .payloadUnsupported]

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
        case .annexC:
            guard let plaintext = request.plaintext else { return nil }
            if let response = DeviceResponse.commonForm(plaintext[...], limits: limits) { return response }
            do {
                return try DeviceResponse(try CBORDecoder(limits: limits).decode(plaintext), limits: limits)
            } catch {
                report.fail(name, RequestUnderVerification.payloadReason(error, "decrypted DeviceResponse"))
            }
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
}
