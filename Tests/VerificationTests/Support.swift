import Crypto
import Foundation
import MDoc
import Testing
import Verification
import TestSupport

/// A pinned instant, `YYYY-MM-DDTHH:MM:SSZ`.
func instant(_ text: String) -> Date {
    guard let date = RFC3339.date(from: text) else { fatalError("bad test date \(text)") }
    return date
}

func certificates(_ relativePath: String) throws -> [Certificate] {
    try Certificate.parsePEM(Vectors.text(relativePath))
}

func base64(_ bytes: some Collection<UInt8>) -> String {
    Data(bytes).base64EncodedString()
}

/// A structured-mode `veridoc.verification.requested.v1` CloudEvent. Its
/// `time` is one minute before `verifiedAt`, well inside the request age.
func requestEvent(tenant: String, flow: Flow, data fields: [String: Any], verifiedAt: Date, id: String = "vector-test") -> [UInt8] {
    var data = fields
    data["tenant"] = tenant
    data["flow"] = flow.rawValue
    let event: [String: Any] = [
        "specversion": "1.0",
        "id": id,
        "source": "/veridoc/tests/vectors",
        "type": VerificationRequest.eventType,
        "time": RFC3339.string(from: verifiedAt.addingTimeInterval(-60)),
        "datacontenttype": "application/json",
        "data": data,
    ]
    return Array(try! JSONSerialization.data(withJSONObject: event, options: [.sortedKeys]))
}

/// An `iso-device-response` event for one vector folder's files.
func isoEvent(
    tenant: String = "t", payload: [UInt8], transcript: [UInt8], readerKey: [UInt8]? = nil, verifiedAt: Date, reader: (id: String, key: PrivateKey)? = nil
) -> [UInt8] {
    var data: [String: Any] = ["payload": base64(payload), "sessionTranscript": base64(transcript)]
    if let readerKey { data["ephemeralReaderKey"] = base64(readerKey) }
    if let reader {
        // The reader signs at the event's time, as a reader app would when it forwards the read.
        let signedAt = RFC3339.string(from: verifiedAt.addingTimeInterval(-60))
        let signed = ReaderAttestation.signedBytes(
            tenant: tenant, readerID: reader.id, signedAtText: signedAt, response: payload, transcript: transcript, readerKey: readerKey)
        let signature = try! reader.key.signature(for: signed, hash: .sha256)
        data["readerAuthentication"] = ["readerId": reader.id, "signedAt": signedAt, "signature": base64(signature)]
    }
    return requestEvent(tenant: tenant, flow: .isoDeviceResponse, data: data, verifiedAt: verifiedAt)
}

/// Verifies a plain DeviceResponse vector folder (`device_response.hex` and
/// `session_transcript.cbor.hex`) against `anchors` (and signers pinned as they are) at `time`.
func verifyISOFolder(
    _ folder: String, anchors: [Certificate] = [], pinned: [Certificate] = [], at time: Date, transcriptFile: String = "session_transcript.cbor.hex"
) throws -> VerificationResult {
    let verifier = Verifier(directory: TenantDirectory([Tenant(id: "t", trustAnchors: anchors, pinnedDocumentSigners: pinned)]))
    let event = isoEvent(
        payload: try Vectors.hex("\(folder)/device_response.hex"), transcript: try Vectors.hex("\(folder)/\(transcriptFile)"), verifiedAt: time)
    return verifier.verify(eventJSON: event, at: time)
}

extension VerificationResult {
    /// The reason codes, in report order.
    var codes: [ReasonCode] { report.reasons.map(\.code) }

    /// A readable dump for failed expectations.
    var summary: String {
        report.reasons.map { "\($0.code.rawValue): \($0.detail)" }.joined(separator: "\n")
    }
}
