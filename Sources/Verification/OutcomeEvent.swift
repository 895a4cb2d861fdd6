import Crypto
import Foundation
import MDoc

/// The `veridoc.verification.completed.v1` CloudEvent
/// (Schemas/verification-completed.v1.schema.json). It carries element names
/// and retention, never element values in clear: with a `claimsRecipient`
/// (the tenant's `outcomeRecipientKey`) the requested values travel sealed
/// to that key in `data.claims` (see `OutcomeClaims`).
public struct OutcomeEvent: Sendable {
    public static let eventType = "veridoc.verification.completed.v1"
    public static let defaultSource = "urn:veridoc:verifier"

    public let result: VerificationResult
    public let source: String
    public let claimsRecipient: PublicKey?

    public init(_ result: VerificationResult, source: String = OutcomeEvent.defaultSource, claimsRecipient: PublicKey? = nil) {
        self.result = result
        self.source = source
        self.claimsRecipient = claimsRecipient
    }

    /// Derived from the request id alone, so a redelivered request produces an
    /// outcome with the same id and consumers can drop the duplicate.
    public static func id(forRequest requestID: String) -> String {
        var bytes = Array(sha256(Array("veridoc.verification.completed.v1\u{0}\(requestID)".utf8)).prefix(16))
        bytes[6] = bytes[6] & 0x0f | 0x80  // UUID version 8 (custom, RFC 9562)
        bytes[8] = bytes[8] & 0x3f | 0x80  // RFC 4122 variant
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.map(String.init).joined(separator: "-")
    }

    public var jsonObject: [String: Any] {
        let requestID = result.requestID ?? ""
        let document: Any = result.documents.first.map(Self.document) ?? NSNull()
        var data: [String: Any] = [
            "requestId": requestID,
            "tenant": result.tenant as Any? ?? NSNull(),
            "flow": result.flow?.rawValue as Any? ?? NSNull(),
            "verdict": result.verdict,
            "reasons": result.report.reasons.map { ["code": $0.code.rawValue, "detail": $0.detail] },
            "checks": result.report.checks.map { ["name": $0.name.rawValue, "status": $0.status.rawValue] },
            "document": document,
        ]
        data["elements"] = result.documents.flatMap { summary in
            summary.elements.map { element -> [String: Any] in
                let requested = result.requestedElements.first { $0.namespace == element.namespace && $0.element == element.identifier }
                return ["namespace": element.namespace, "element": element.identifier, "retention": requested.map { Self.retention($0.retention) } ?? NSNull()]
            }
        }
        if let claimsRecipient, let claims = OutcomeClaims.sealed(result, to: claimsRecipient) {
            data["claims"] = claims
        }
        return [
            "specversion": "1.0",
            "id": Self.id(forRequest: requestID),
            "source": source,
            "type": Self.eventType,
            "subject": requestID,
            "time": RFC3339.string(from: result.verifiedAt),
            "datacontenttype": "application/json",
            "data": data,
        ]
    }

    /// One line of JSON with sorted keys: the same result always gives the same
    /// bytes, except `data.claims`, whose HPKE ephemeral key is fresh each time.
    public func json() -> String {
        encoded().json
    }

    /// The JSON and whether it carries sealed `data.claims` (the outbox marks
    /// such rows so the purge can strip the claims once delivered).
    public func encoded() -> (json: String, hasClaims: Bool) {
        let object = jsonObject
        let hasClaims = (object["data"] as? [String: Any])?["claims"] != nil
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return (String(decoding: data, as: UTF8.self), hasClaims)
    }

    static func retention(_ retention: Retention) -> [String: Any] {
        switch retention {
        case .willNotStore: ["intent": "willNotStore"]
        case .mayStore(let days?): ["intent": "mayStore", "days": days]
        case .mayStore(nil): ["intent": "mayStore"]
        }
    }

    private static func document(_ summary: DocumentSummary) -> [String: Any] {
        func date(_ value: Date?) -> Any { value.map(RFC3339.string(from:)) ?? NSNull() }
        return [
            "docType": summary.docType,
            "issuer": ["subject": summary.issuerSubject as Any? ?? NSNull(), "country": summary.issuerCountry as Any? ?? NSNull()],
            "mso": ["signed": date(summary.signed), "validFrom": date(summary.validFrom), "validUntil": date(summary.validUntil)],
        ]
    }
}
