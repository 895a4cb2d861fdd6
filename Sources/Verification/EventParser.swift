import Foundation
import JSON
import MDoc

/// Why an event is not a valid request, with whatever could still be
/// attributed (so the rejection can be reported against its id and tenant).
public struct EventRejection: Error, Sendable, Equatable {
    public let id: String?
    public let tenant: String?
    public let flow: Flow?
    /// Names the attribute or field; never quotes its value.
    public let detail: String

    public init(id: String?, tenant: String?, flow: Flow?, detail: String) {
        self.id = id
        self.tenant = tenant
        self.flow = flow
        self.detail = detail
    }
}

/// Reads `veridoc.verification.requested.v1` CloudEvents (structured-mode JSON,
/// or binary-mode attributes plus a JSON `data` value). Strict: a field of the
/// wrong type, a wrong alphabet of base64, or an unknown data field is an
/// `event.invalid`, so that two producers never mean different things by one event.
public struct EventParser: Sendable {
    public var maxEventBytes: Int

    /// Members any object of an event may have. An event has a dozen at its
    /// top level and in `data`; CloudEvents extensions may add some, never
    /// thousands, and past this the event is refused before the rest is read.
    public static let maxObjectMembers = 256

    public init(maxEventBytes: Int = 4 << 20) {
        self.maxEventBytes = maxEventBytes
    }

    public func parse(json bytes: [UInt8]) -> Result<VerificationRequest, EventRejection> {
        guard bytes.count <= maxEventBytes else {
            return .failure(EventRejection(id: nil, tenant: nil, flow: nil, detail: "event of \(bytes.count) bytes exceeds \(maxEventBytes)"))
        }
        if let request = commonForm(bytes) { return .success(request) }
        let parsed: JSONValue
        do {
            parsed = try JSONParser(maxMembers: Self.maxObjectMembers).parse(bytes)
        } catch {
            let detail = error.reason == .tooManyMembers
                ? "event has an object of more than \(Self.maxObjectMembers) members" : "event is not a JSON object"
            return .failure(EventRejection(id: nil, tenant: nil, flow: nil, detail: detail))
        }
        guard let object = parsed.objectValue else {
            return .failure(EventRejection(id: nil, tenant: nil, flow: nil, detail: "event is not a JSON object"))
        }
        return parse(attributes: object, data: object["data"])
    }

    /// A valid event in the form nearly every producer writes, read in one
    /// pass (`EventCommonForm`); nil for anything else, which the general
    /// reader then reads (and, if it must, rejects). No size check here.
    public func commonForm(_ bytes: [UInt8]) -> VerificationRequest? {
        bytes.withUnsafeBufferPointer { EventCommonForm.read($0) }
    }

    /// `attributes` are the CloudEvents context attributes (a structured event's
    /// top level, or binary mode's `ce_` headers without the prefix, as strings).
    public func parse(attributes: JSONObject, data: JSONValue?) -> Result<VerificationRequest, EventRejection> {
        let id = attributes["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let dataObject = data?.objectValue
        let tenant = dataObject?["tenant"]?.stringValue.flatMap { $0.utf8.count <= VerificationRequest.maxTenantLength ? $0 : nil }
        let flow = dataObject?["flow"]?.stringValue.flatMap(Flow.init(rawValue:))
        func reject(_ detail: String) -> Result<VerificationRequest, EventRejection> {
            .failure(EventRejection(id: id, tenant: tenant, flow: flow, detail: detail))
        }

        guard let id else { return reject("id is missing or not a non-empty string") }
        guard attributes["specversion"]?.stringValue == "1.0" else { return reject("specversion is not \"1.0\"") }
        guard attributes["type"]?.stringValue == VerificationRequest.eventType else { return reject("type is not \(VerificationRequest.eventType)") }
        guard let source = attributes["source"]?.stringValue, !source.isEmpty else { return reject("source is missing") }
        guard let timeText = attributes["time"]?.stringValue, let time = RFC3339.date(from: timeText) else {
            return reject("time is missing or not RFC 3339")
        }
        guard attributes["datacontenttype"]?.stringValue == "application/json" else { return reject("datacontenttype is not application/json") }
        guard let dataObject else { return reject("data is not a JSON object") }
        guard let tenant, !tenant.isEmpty else {
            return reject(dataObject["tenant"]?.stringValue == nil ? "data.tenant is missing" : "data.tenant is empty or longer than \(VerificationRequest.maxTenantLength) bytes")
        }
        guard let flow else { return reject("data.flow is not one of \(Flow.allCases.map(\.rawValue).joined(separator: ", "))") }

        var fields = Fields(object: dataObject)
        _ = fields.string("tenant")
        _ = fields.string("flow")
        do throws(FieldError) {
            let input: VerificationRequest.Input
            var sessionToken: [UInt8]?
            var readerAuthentication: ReaderAttestation?
            switch flow {
            case .appleWalletApp:
                let payload = try fields.standardBase64("payload")
                let (nonce, nonceText) = try fields.standardBase64WithText("nonce")
                guard (1...64).contains(nonce.count) else { throw FieldError("data.nonce must be 1 to 64 bytes") }
                input = .appleWalletApp(payload: payload, nonce: nonce, nonceText: nonceText, merchantID: try fields.requiredString("merchantId"))
            case .appleWalletWeb:
                let response = try fields.urlBase64("response")
                let encryptionInfo = try fields.requiredString("encryptionInfo")
                guard let infoBytes = Base64.decodeURL(encryptionInfo) else { throw FieldError("data.encryptionInfo is not base64url") }
                input = .appleWalletWeb(response: response, encryptionInfo: encryptionInfo, encryptionInfoBytes: infoBytes, origin: try fields.requiredString("origin"))
            case .isoDeviceResponse:
                let payload = try fields.standardBase64("payload")
                let transcript = try fields.standardBase64("sessionTranscript")
                let readerKey = fields.has("ephemeralReaderKey") ? try fields.standardBase64("ephemeralReaderKey") : nil
                input = .isoDeviceResponse(payload: payload, sessionTranscript: transcript, ephemeralReaderKey: readerKey)
                if fields.has("sessionToken") {
                    let token = try fields.standardBase64("sessionToken")
                    guard token.count == IssuedNonce.byteCount else { throw FieldError("data.sessionToken must be \(IssuedNonce.byteCount) bytes") }
                    sessionToken = token
                }
                readerAuthentication = try fields.readerAuthentication()
            case .openID4VPDCAPI:
                let origin = try fields.requiredString("origin")
                let nonce = try fields.requiredString("nonce")
                guard (OpenID4VPResponse.minNonceBytes...OpenID4VPResponse.maxNonceBytes).contains(nonce.utf8.count) else {
                    throw FieldError("data.nonce must be \(OpenID4VPResponse.minNonceBytes) to \(OpenID4VPResponse.maxNonceBytes) bytes")
                }
                let queryID = fields.has("credentialQueryId") ? try fields.requiredString("credentialQueryId") : nil
                if let queryID, !OpenID4VPResponse.isCredentialQueryID(queryID) {
                    throw FieldError("data.credentialQueryId must be 1 to \(OpenID4VPResponse.maxCredentialQueryIDBytes) letters, digits, _ or - (DCQL)")
                }
                input = .openID4VPDCAPI(origin: origin, nonce: nonce, response: try fields.openID4VPResponse(), credentialQueryID: queryID)
            }
            let requested = try fields.requestedElements()
            let docTypes = try fields.requestedDocTypes()
            let ages = try fields.ageRequests()
            if let refusal = AgeRequest.refusal(ages, with: requested) { throw FieldError("data.\(refusal.field) must be \(refusal.expected)") }
            if let unknown = fields.unread.first { throw FieldError("data.\(unknown) is not a field of the \(flow.rawValue) flow") }
            return .success(VerificationRequest(id: id, source: source, time: time, tenant: tenant, input: input, requestedElements: requested,
                                                sessionToken: sessionToken, readerAuthentication: readerAuthentication, requestedDocTypes: docTypes,
                                                ageRequests: ages))
        } catch {
            return reject(error.detail)
        }
    }
}

struct FieldError: Error {
    let detail: String
    init(_ detail: String) { self.detail = detail }
}

/// Reads `data` fields and remembers which were read, so that leftovers can be
/// refused. Names match by their bytes (as `JSONObject` keys do), so a
/// lookalike such as a Kelvin sign for "K" is an unknown field, not the field.
struct Fields {
    let object: JSONObject
    private var read: [String] = []

    init(object: JSONObject) {
        self.object = object
    }

    var unread: [String] {
        object.keys.filter { key in !read.contains { $0.utf8.elementsEqual(key.utf8) } }.sorted()
    }

    func has(_ name: String) -> Bool { object[name].map { !$0.isNull } ?? false }

    private mutating func markRead(_ name: String) {
        if !read.contains(name) { read.append(name) }
    }

    mutating func string(_ name: String) -> String? {
        markRead(name)
        return object[name]?.stringValue
    }

    mutating func requiredString(_ name: String) throws(FieldError) -> String {
        guard let value = string(name), !value.isEmpty else { throw FieldError("data.\(name) is missing or not a non-empty string") }
        return value
    }

    mutating func standardBase64(_ name: String) throws(FieldError) -> [UInt8] {
        try standardBase64WithText(name).bytes
    }

    mutating func standardBase64WithText(_ name: String) throws(FieldError) -> (bytes: [UInt8], text: String) {
        let text = try requiredString(name)
        guard let bytes = Base64.decodeStandard(text) else { throw FieldError("data.\(name) is not standard base64") }
        return (bytes, text)
    }

    mutating func urlBase64(_ name: String) throws(FieldError) -> [UInt8] {
        let text = try requiredString(name)
        guard let bytes = Base64.decodeURL(text) else { throw FieldError("data.\(name) is not base64url") }
        return bytes
    }

    /// `response`: what the browser's promise resolved with (`OpenID4VPResponse`).
    mutating func openID4VPResponse() throws(FieldError) -> OpenID4VPResponse {
        markRead("response")
        return try OpenID4VPResponse.read(object["response"], context: "data.response")
    }

    /// `readerAuthentication`: `{"readerId", "signedAt" (RFC 3339), "signature" (standard base64 of r ‖ s)}`, nothing else.
    mutating func readerAuthentication() throws(FieldError) -> ReaderAttestation? {
        markRead("readerAuthentication")
        guard let value = object["readerAuthentication"], !value.isNull else { return nil }
        let context = "data.readerAuthentication"
        guard let entry = value.objectValue, entry.count == 3 else { throw FieldError("\(context) is an object of readerId, signedAt and signature") }
        guard let readerID = entry["readerId"]?.stringValue, !readerID.isEmpty, readerID.utf8.count <= ReaderAttestation.maxReaderIDLength else {
            throw FieldError("\(context).readerId is not a non-empty string of at most \(ReaderAttestation.maxReaderIDLength) bytes")
        }
        guard let signedAtText = entry["signedAt"]?.stringValue, signedAtText.utf8.count <= 64, let signedAt = RFC3339.date(from: signedAtText) else {
            throw FieldError("\(context).signedAt is not an RFC 3339 time")
        }
        guard let signatureText = entry["signature"]?.stringValue, let signature = Base64.decodeStandard(signatureText), signature.count == 64 else {
            throw FieldError("\(context).signature is not standard base64 of a 64-byte ECDSA P-256 signature (r ‖ s)")
        }
        return ReaderAttestation(readerID: readerID, signedAtText: signedAtText, signedAt: signedAt, signature: signature)
    }

    /// `requestedDocTypes`: distinct non-empty strings, at most `maxRequestedDocTypes`.
    mutating func requestedDocTypes() throws(FieldError) -> [String] {
        markRead("requestedDocTypes")
        guard let value = object["requestedDocTypes"], !value.isNull else { return [] }
        let limit = VerificationRequest.maxRequestedDocTypes
        guard let list = value.arrayValue, !list.isEmpty, list.count <= limit else {
            throw FieldError("data.requestedDocTypes is not an array of 1 to \(limit) docTypes")
        }
        var docTypes: [String] = []
        for (index, entry) in list.enumerated() {
            guard let docType = entry.stringValue, !docType.isEmpty, docType.utf8.count <= VerificationRequest.maxDocTypeLength else {
                throw FieldError("data.requestedDocTypes[\(index)] is not a non-empty string of at most \(VerificationRequest.maxDocTypeLength) bytes")
            }
            guard !docTypes.contains(where: { $0.hasSameUTF8(as: docType) }) else { throw FieldError("data.requestedDocTypes[\(index)] repeats a docType") }
            docTypes.append(docType)
        }
        return docTypes
    }

    /// `ageAtLeast`: `[{"age": N, "retention": {...}}]`, 1 to `AgeRequest.maxPerRequest` entries;
    /// the ages themselves are judged by `AgeRequest.refusal`.
    mutating func ageRequests() throws(FieldError) -> [AgeRequest] {
        markRead("ageAtLeast")
        guard let value = object["ageAtLeast"], !value.isNull else { return [] }
        guard let list = value.arrayValue, !list.isEmpty, list.count <= AgeRequest.maxPerRequest else {
            throw FieldError("data.ageAtLeast is not an array of 1 to \(AgeRequest.maxPerRequest) ages")
        }
        var ages: [AgeRequest] = []
        for (index, entry) in list.enumerated() {
            let context = "data.ageAtLeast[\(index)]"
            guard let entry = entry.objectValue, let age = entry["age"].flatMap(wholeNumber), entry.count == 2, entry.contains("retention") else {
                throw FieldError("\(context) is an object of age (a whole number) and retention")
            }
            ages.append(AgeRequest(age: age, retention: try Self.retention(entry["retention"], context)))
        }
        return ages
    }

    mutating func requestedElements() throws(FieldError) -> [RequestedElement] {
        markRead("requestedElements")
        guard let value = object["requestedElements"], !value.isNull else { return [] }
        return try Self.requestedElements(in: value)
    }

    /// A non-null `requestedElements` value read by these rules (also for `EventCommonForm`).
    static func requestedElements(in value: JSONValue) throws(FieldError) -> [RequestedElement] {
        guard let list = value.arrayValue else { throw FieldError("data.requestedElements is not an array") }
        var elements: [RequestedElement] = []
        for (index, entry) in list.enumerated() {
            let context = "data.requestedElements[\(index)]"
            guard let entry = entry.objectValue,
                  let namespace = entry["namespace"]?.stringValue, !namespace.isEmpty,
                  let element = entry["element"]?.stringValue, !element.isEmpty
            else { throw FieldError("\(context) needs namespace and element strings") }
            guard entry.count == (entry.contains("retention") ? 3 : 2) else { throw FieldError("\(context) has unknown fields") }
            elements.append(RequestedElement(namespace: namespace, element: element, retention: try Self.retention(entry["retention"], context)))
        }
        return elements
    }

    private static func retention(_ value: JSONValue?, _ context: String) throws(FieldError) -> Retention {
        guard let object = value?.objectValue, let intent = object["intent"]?.stringValue else {
            throw FieldError("\(context).retention needs an intent")
        }
        switch intent {
        case "willNotStore":
            guard object.count == 1 else { throw FieldError("\(context).retention willNotStore takes no other fields") }
            return .willNotStore
        case "mayStore":
            guard let days = object["days"] else {
                guard object.count == 1 else { throw FieldError("\(context).retention has unknown fields") }
                return .mayStore(days: nil)
            }
            // 2.5 and true are not day counts (2.0 and 2e0 are).
            guard let count = wholeNumber(days), (1...Retention.maximumDays).contains(count), object.count == 2
            else { throw FieldError("\(context).retention.days must be a whole number of days from 1 to \(Retention.maximumDays)") }
            return .mayStore(days: count)
        default:
            throw FieldError("\(context).retention.intent is not willNotStore or mayStore")
        }
    }
}

/// A JSON integer as `Int`, with the bounds the configuration reader has
/// always applied: whole, below 10^15 in magnitude, never a boolean.
func wholeNumber(_ value: JSONValue) -> Int? {
    guard let integer = value.integerValue, integer.magnitude < 1_000_000_000_000_000 else { return nil }
    return Int(integer)
}
