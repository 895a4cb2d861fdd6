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
        var input = Array("veridoc.verification.completed.v1\u{0}".utf8)
        input.append(contentsOf: requestID.utf8)
        return derivedID(input)
    }

    /// A UUID (version 8) from the SHA-256 of `input`: the same input, the same id.
    static func derivedID(_ input: [UInt8]) -> String {
        var bytes = sha256(input)
        bytes[6] = bytes[6] & 0x0f | 0x80  // UUID version 8 (custom, RFC 9562)
        bytes[8] = bytes[8] & 0x3f | 0x80  // RFC 4122 variant
        // 8-4-4-4-12 hex digits of the first 16 bytes, written in place: the
        // id is made for every event, and slicing strings is a measurable part
        // of a verify.
        return String(unsafeUninitializedCapacity: 36) { out in
            var next = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[next] = UInt8(ascii: "-")
                    next += 1
                }
                out[next] = hexDigit(bytes[index] >> 4)
                out[next + 1] = hexDigit(bytes[index] & 0x0f)
                next += 2
            }
            return next
        }
    }

    /// The event as a JSON value; `null` wherever the schema allows it for a missing part.
    public var jsonValue: JSONValue {
        let requestID = result.requestID ?? ""
        let index = RequestedElementIndex(result.requestedElements)
        let elements: [JSONValue] = result.documents.flatMap { summary in
            summary.elements.map { element -> JSONValue in
                let requested = index[namespace: element.namespace, element: element.identifier]
                return [
                    "namespace": .string(element.namespace), "element": .string(element.identifier),
                    "retention": requested.map { $0.retention.jsonValue } ?? .null, "typed": .bool(element.isTyped),
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
            "withheld": .array(result.withheldElements.map { ["namespace": .string($0.namespace), "element": .string($0.element)] }),
            "status": JSONValue(result.status?.word),
        ]
        if let claimsRecipient, let claims = OutcomeClaims.sealed(result, to: claimsRecipient) {
            data["claims"] = claims.jsonValue
        }
        if !result.ageAnswers.isEmpty {
            data["ages"] = .array(result.ages.map(Self.age))
        }
        let deviceSigned = result.documents.flatMap(\.deviceSignedElements)
        if !deviceSigned.isEmpty {
            data["deviceSignedElements"] = .array(deviceSigned.map { ["namespace": .string($0.namespace), "element": .string($0.identifier)] })
        }
        if case .test(let kind) = result.assurance {
            data["assurance"] = ["level": "test", "kind": JSONValue(kind?.rawValue)]
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

    /// Bytes an encoded outcome may take: below Kafka's default message limit
    /// (1,000,000 bytes in librdkafka's producer, 1 MiB in the broker), which
    /// an outcome listing thousands of disclosed elements, or sealing large
    /// values, could otherwise pass and never be delivered.
    public static let maxBytes = 900_000

    /// The JSON and whether it carries sealed `data.claims` (the outbox marks
    /// such rows so the purge can strip the claims once delivered). Past
    /// `maxBytes` the outcome is sent reduced (`data.reduced`): no claims, no
    /// elements, reason details replaced, and the document only when verified.
    public func encoded() -> (json: String, hasClaims: Bool) {
        let full = encoded(reduced: false)
        guard full.json.utf8.count > Self.maxBytes else { return full }
        let detail = "left out: the outcome exceeded \(Self.maxBytes) bytes"
        let reduced = VerificationResult(
            requestID: result.requestID, tenant: result.tenant, flow: result.flow, verifiedAt: result.verifiedAt, eventTime: result.eventTime,
            report: result.report.replacingDetails(with: detail),
            documents: result.isAccepted ? result.documents.map { summary in
                var summary = summary
                summary.elements = []
                return summary
            } : [],
            requestedElements: [], replayToken: nil, assurance: result.assurance, ageAnswers: result.ageAnswers)
        let encoded = OutcomeEvent(reduced, source: source).encoded(reduced: true)
        return (encoded.json, encoded.hasClaims)
    }

    ///
    /// Written member by member in sorted key order — the bytes
    /// `jsonValue.jsonString()` gives (pinned by tests) without building the
    /// tree, which would be a large part of a whole verification.
    private func encoded(reduced: Bool) -> (json: String, hasClaims: Bool) {
        let claims = claimsRecipient.flatMap { OutcomeClaims.sealed(result, to: $0) }
        let requestID = result.requestID ?? ""
        // Room for a document with a few dozen elements, so the buffer is not
        // copied to grow (an mDL outcome is ~3 KB).
        var out = JSONStream(capacity: 4096)
        out.beginObject()
        out.key("data")
        out.beginObject()
        let ages = result.ages
        if !ages.isEmpty {
            out.key("ages")
            out.beginArray()
            for age in ages { Self.write(age, to: &out) }
            out.endArray()
        }
        if case .test(let kind) = result.assurance {
            out.key("assurance")
            out.beginObject()
            out.key("kind"); out.string(orNull: kind?.rawValue)
            out.key("level"); out.string("test")
            out.endObject()
        }
        out.key("checks")
        out.beginArray()
        for check in result.report.checks {
            out.beginObject()
            out.key("name"); out.string(check.name.rawValue)
            out.key("status"); out.string(check.status.rawValue)
            out.endObject()
        }
        out.endArray()
        if let claims {
            out.key("claims"); claims.write(to: &out)
        }
        if result.documents.contains(where: { !$0.deviceSignedElements.isEmpty }) {
            out.key("deviceSignedElements")
            out.beginArray()
            for name in result.documents.flatMap(\.deviceSignedElements) {
                out.beginObject()
                out.key("element"); out.string(name.identifier)
                out.key("namespace"); out.string(name.namespace)
                out.endObject()
            }
            out.endArray()
        }
        out.key("document")
        if let summary = result.documents.first { Self.write(summary, to: &out) } else { out.null() }
        out.key("elements")
        out.beginArray()
        let index = RequestedElementIndex(result.requestedElements)
        for summary in result.documents {
            for element in summary.elements {
                out.beginObject()
                out.key("element"); out.string(element.identifier)
                out.key("namespace"); out.string(element.namespace)
                out.key("retention")
                let requested = index[namespace: element.namespace, element: element.identifier]
                if let requested { Self.write(requested.retention, to: &out) } else { out.null() }
                out.key("typed"); out.value(.bool(element.isTyped))
                out.endObject()
            }
        }
        out.endArray()
        out.key("flow"); out.string(orNull: result.flow?.rawValue)
        out.key("reasons")
        out.beginArray()
        for reason in result.report.reasons {
            out.beginObject()
            out.key("code"); out.string(reason.code.rawValue)
            out.key("detail"); out.string(reason.detail)
            out.endObject()
        }
        out.endArray()
        if reduced { out.key("reduced"); out.value(.bool(true)) }
        out.key("requestId"); out.string(requestID)
        out.key("status"); out.string(orNull: result.status?.word)
        out.key("tenant"); out.string(orNull: result.tenant)
        out.key("verdict"); out.string(result.verdict)
        out.key("withheld")
        out.beginArray()
        for element in result.withheldElements {
            out.beginObject()
            out.key("element"); out.string(element.element)
            out.key("namespace"); out.string(element.namespace)
            out.endObject()
        }
        out.endArray()
        out.endObject()
        out.key("datacontenttype"); out.string("application/json")
        out.key("id"); out.string(Self.id(forRequest: requestID))
        out.key("source"); out.string(source)
        out.key("specversion"); out.string("1.0")
        out.key("subject"); out.string(requestID)
        out.key("time"); out.string(RFC3339.string(from: result.verifiedAt))
        out.key("type"); out.string(Self.eventType)
        out.endObject()
        return (out.string, claims != nil || !ages.isEmpty)
    }

    /// `{"answer", "atLeast", "derived", "element", "namespace"}`: the answer
    /// is a JSON boolean, or null when unknown, so that code testing it for
    /// truth never takes "unknown" for yes.
    private static func write(_ age: AgeAnswer, to out: inout JSONStream) {
        out.beginObject()
        out.key("answer")
        switch age.value {
        case .yes: out.value(.bool(true))
        case .no: out.value(.bool(false))
        case .unknown: out.null()
        }
        out.key("atLeast"); out.integer(age.threshold)
        out.key("derived"); out.value(.bool(age.isDerived))
        out.key("element"); out.string(orNull: age.element)
        out.key("namespace"); out.string(orNull: age.namespace)
        out.endObject()
    }

    static func age(_ age: AgeAnswer) -> JSONValue {
        let answer: JSONValue = switch age.value {
        case .yes: .bool(true)
        case .no: .bool(false)
        case .unknown: .null
        }
        return ["answer": answer, "atLeast": .integer(age.threshold), "derived": .bool(age.isDerived),
                "element": JSONValue(age.element), "namespace": JSONValue(age.namespace)]
    }

    private static func write(_ retention: Retention, to out: inout JSONStream) {
        out.beginObject()
        switch retention {
        case .willNotStore:
            out.key("intent"); out.string("willNotStore")
        case .mayStore(let days):
            if let days { out.key("days"); out.integer(days) }
            out.key("intent"); out.string("mayStore")
        }
        out.endObject()
    }

    private static func write(_ summary: DocumentSummary, to out: inout JSONStream) {
        func date(_ value: Date?) -> String? { value.map(RFC3339.string(from:)) }
        out.beginObject()
        out.key("deviceAuthentication")
        if let method = summary.deviceAuthentication {
            out.beginObject()
            out.key("method"); out.string(method.method)
            out.key("reader"); out.string(orNull: method.reader)
            out.endObject()
        } else {
            out.null()
        }
        out.key("docType"); out.string(summary.docType)
        out.key("issuer")
        out.beginObject()
        out.key("country"); out.string(orNull: summary.issuerCountry)
        out.key("subject"); out.string(orNull: summary.issuerSubject)
        out.endObject()
        out.key("mso")
        out.beginObject()
        out.key("signed"); out.string(orNull: date(summary.signed))
        out.key("validFrom"); out.string(orNull: date(summary.validFrom))
        out.key("validUntil"); out.string(orNull: date(summary.validUntil))
        out.endObject()
        out.key("status")
        if let status = summary.status {
            out.beginObject()
            out.key("cause"); out.string(orNull: status.cause)
            out.key("state"); out.string(status.word)
            out.endObject()
        } else {
            out.null()
        }
        out.endObject()
    }

    private static func document(_ summary: DocumentSummary) -> JSONValue {
        func date(_ value: Date?) -> JSONValue { JSONValue(value.map(RFC3339.string(from:))) }
        return [
            "deviceAuthentication": summary.deviceAuthentication.map { ["method": .string($0.method), "reader": JSONValue($0.reader)] } ?? .null,
            "docType": .string(summary.docType),
            "issuer": ["subject": JSONValue(summary.issuerSubject), "country": JSONValue(summary.issuerCountry)],
            "mso": ["signed": date(summary.signed), "validFrom": date(summary.validFrom), "validUntil": date(summary.validUntil)],
            "status": summary.status.map { ["state": .string($0.word), "cause": JSONValue($0.cause)] } ?? .null,
        ]
    }
}

private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
}
