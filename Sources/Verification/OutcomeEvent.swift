import Crypto
import Foundation
import JSON
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
        let digits = Array("0123456789abcdef".utf8)
        let hex = String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.map(String.init).joined(separator: "-")
    }

    /// The event as a JSON value; `null` wherever the schema allows it for a missing part.
    public var jsonValue: JSONValue {
        let requestID = result.requestID ?? ""
        let elements: [JSONValue] = result.documents.flatMap { summary in
            summary.elements.map { element -> JSONValue in
                let requested = result.requestedElements.first { $0.namespace == element.namespace && $0.element == element.identifier }
                return [
                    "namespace": .string(element.namespace), "element": .string(element.identifier),
                    "retention": requested.map { Self.retention($0.retention) } ?? .null,
                ]
            }
        }
        var data: JSONObject = [
            "requestId": .string(requestID),
            "tenant": JSONValue(result.tenant),
            "flow": JSONValue(result.flow?.rawValue),
            "verdict": .string(result.verdict),
            "reasons": .array(result.report.reasons.map { ["code": .string($0.code.rawValue), "detail": .string($0.detail)] }),
            "checks": .array(result.report.checks.map { ["name": .string($0.name.rawValue), "status": .string($0.status.rawValue)] }),
            "document": result.documents.first.map(Self.document) ?? .null,
            "elements": .array(elements),
        ]
        if let claimsRecipient, let claims = OutcomeClaims.sealed(result, to: claimsRecipient) {
            data["claims"] = claims
        }
        return [
            "specversion": "1.0",
            "id": .string(Self.id(forRequest: requestID)),
            "source": .string(source),
            "type": .string(Self.eventType),
            "subject": .string(requestID),
            "time": .string(RFC3339.string(from: result.verifiedAt)),
            "datacontenttype": "application/json",
            "data": .object(data),
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
        let value = jsonValue
        return (value.jsonString(keyOrder: .sorted), value["data"]?["claims"] != nil)
    }

    static func retention(_ retention: Retention) -> JSONValue {
        switch retention {
        case .willNotStore: ["intent": "willNotStore"]
        case .mayStore(let days?): ["intent": "mayStore", "days": .integer(days)]
        case .mayStore(nil): ["intent": "mayStore"]
        }
    }

    private static func document(_ summary: DocumentSummary) -> JSONValue {
        func date(_ value: Date?) -> JSONValue { JSONValue(value.map(RFC3339.string(from:))) }
        return [
            "docType": .string(summary.docType),
            "issuer": ["subject": JSONValue(summary.issuerSubject), "country": JSONValue(summary.issuerCountry)],
            "mso": ["signed": date(summary.signed), "validFrom": date(summary.validFrom), "validUntil": date(summary.validUntil)],
        ]
    }
}
