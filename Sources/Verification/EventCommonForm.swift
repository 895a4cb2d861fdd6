import CBOR
import Foundation
import JSON
import MDoc

/// The request event as nearly every producer writes it, read in one pass
/// over the record without building a `JSONValue` tree: keys must be plain
/// (no escapes), base64 payloads are decoded straight from the record's
/// bytes (no `String` of kilobytes made first and scanned again), and only
/// `requestedElements` and extension attributes are read as values.
///
/// Every byte of an event it reads is checked on the way — structure and
/// whitespace as ASCII, text as UTF-8, payloads as base64 — so such a record
/// is UTF-8 (the worker relies on it to skip its own check).
///
/// It returns the request only when the event is valid, and then exactly the
/// request `EventParser.parse(attributes:data:)` makes of it; for anything
/// else (an escape, a duplicate key, a null, a missing or unknown field, any
/// error at all) it returns nil, and the caller reads the event the general
/// way, which alone decides on the rejection and its detail.
struct EventCommonForm {
    /// Top-level members the reader knows; each may appear once.
    private enum Attribute: Int, CaseIterable, KnownKey {
        case id, specversion, type, source, time, datacontenttype, data

        static let table = names()
    }

    /// `data` fields of the three flows; any other field sends the event to the general reader.
    private enum Field: Int, CaseIterable, KnownKey {
        case tenant, flow, payload, nonce, merchantId, response, encryptionInfo, origin, sessionTranscript, ephemeralReaderKey, requestedElements

        static let table = names()

        var bit: Int { 1 << rawValue }
    }

    /// The fields each flow takes (besides the optional `requestedElements`,
    /// and `ephemeralReaderKey` for the proximity flow).
    private static func required(_ flow: Flow) -> Int {
        switch flow {
        case .appleWalletApp: Field.tenant.bit | Field.flow.bit | Field.payload.bit | Field.nonce.bit | Field.merchantId.bit
        case .appleWalletWeb: Field.tenant.bit | Field.flow.bit | Field.response.bit | Field.encryptionInfo.bit | Field.origin.bit
        case .isoDeviceResponse: Field.tenant.bit | Field.flow.bit | Field.payload.bit | Field.sessionTranscript.bit
        case .openID4VPDCAPI: -1
        }
    }

    private static func optional(_ flow: Flow) -> Int {
        flow == .isoDeviceResponse ? Field.requestedElements.bit | Field.ephemeralReaderKey.bit : Field.requestedElements.bit
    }

    static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> VerificationRequest? {
        var scanner = JSONScanner(bytes, maxMembers: EventParser.maxObjectMembers)
        // The top level is at depth 1, `data` at 2, its members' containers at 3.
        guard scanner.maxDepth >= 2, scanner.consume(UInt8(ascii: "{")) else { return nil }
        var id: String?, specVersionOK = false, typeOK = false, source: String?, time: Date?, contentTypeOK = false
        var data: DataFields?
        var seen = 0
        var otherKeys = TextKeySet()
        var members = 0
        if !scanner.consume(UInt8(ascii: "}")) {
            repeat {
                guard let key = scanner.plainString(), scanner.consume(UInt8(ascii: ":")) else { return nil }
                members += 1
                guard members <= EventParser.maxObjectMembers else { return nil }
                guard let attribute = Attribute(key) else {
                    // An extension attribute: any valid value, read by the parser's rules.
                    guard otherKeys.insert(Array(key)[...]), scanner.value(depth: 1) != nil else { return nil }
                    continue
                }
                guard seen & (1 << attribute.rawValue) == 0 else { return nil }
                seen |= 1 << attribute.rawValue
                if attribute == .data {
                    guard let fields = DataFields.read(&scanner) else { return nil }
                    data = fields
                    continue
                }
                guard let value = scanner.string() else { return nil }
                switch attribute {
                case .id: id = value
                // Compared as the general reader compares them (Swift string equality).
                case .specversion: specVersionOK = value == "1.0"
                case .type: typeOK = value == VerificationRequest.eventType
                case .source: source = value
                case .time: time = RFC3339.date(from: value)
                case .datacontenttype: contentTypeOK = value == "application/json"
                case .data: return nil
                }
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "}")) else { return nil }
        }
        guard scanner.isAtEnd(), let id, !id.isEmpty, specVersionOK, typeOK, let source, !source.isEmpty, let time, contentTypeOK,
              let data, let request = data.request(id: id, source: source, time: time)
        else { return nil }
        return request
    }

    /// What `data` held, fields decoded as they were read.
    private struct DataFields {
        var present = 0
        var tenant: String?, flow: Flow?, merchantID: String?, origin: String?
        var encryptionInfo: String?, encryptionInfoBytes: [UInt8]?
        var nonce: [UInt8]?, nonceText: String?
        var payload: [UInt8]?, response: [UInt8]?, sessionTranscript: [UInt8]?, ephemeralReaderKey: [UInt8]?
        var requestedElements: [RequestedElement] = []

        static func read(_ scanner: inout JSONScanner) -> DataFields? {
            guard scanner.consume(UInt8(ascii: "{")) else { return nil }
            var fields = DataFields()
            guard !scanner.consume(UInt8(ascii: "}")) else { return fields }
            repeat {
                guard let key = scanner.plainString(), scanner.consume(UInt8(ascii: ":")), let field = Field(key),
                      fields.present & field.bit == 0
                else { return nil }
                fields.present |= field.bit
                switch field {
                case .tenant, .flow, .merchantId, .origin, .encryptionInfo, .nonce:
                    // Every one of these must be a non-empty string.
                    guard let text = scanner.string(), !text.isEmpty else { return nil }
                    switch field {
                    case .tenant: fields.tenant = text
                    case .flow:
                        // OpenID4VP's response is an object: the general reader reads that flow.
                        guard let flow = Flow(rawValue: text), flow != .openID4VPDCAPI else { return nil }
                        fields.flow = flow
                    case .merchantId: fields.merchantID = text
                    case .origin: fields.origin = text
                    case .encryptionInfo:
                        guard let bytes = Base64.decodeURL(text) else { return nil }
                        fields.encryptionInfo = text
                        fields.encryptionInfoBytes = bytes
                    default:
                        guard let bytes = Base64.decodeStandard(text), (1...64).contains(bytes.count) else { return nil }
                        fields.nonce = bytes
                        fields.nonceText = text
                    }
                case .payload, .response, .sessionTranscript, .ephemeralReaderKey:
                    guard let bytes = base64(&scanner, url: field == .response) else { return nil }
                    switch field {
                    case .payload: fields.payload = bytes
                    case .response: fields.response = bytes
                    case .sessionTranscript: fields.sessionTranscript = bytes
                    default: fields.ephemeralReaderKey = bytes
                    }
                case .requestedElements:
                    var list = scanner
                    if let elements = requestedElements(&list) {
                        scanner = list
                        fields.requestedElements = elements
                    } else {
                        // Another form (or an error): as a value, by the general rules.
                        guard let value = scanner.value(depth: 2), !value.isNull,
                              let elements = try? Fields.requestedElements(in: value)
                        else { return nil }
                        fields.requestedElements = elements
                    }
                }
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "}")) else { return nil }
            return fields
        }

        /// `requestedElements` in its common form, without a `JSONValue` per
        /// entry: each entry an object of plain keys holding exactly
        /// `namespace`, `element` (non-empty strings) and `retention` (an
        /// object of `intent` and, for mayStore, an optional plain-digit
        /// `days`). Anything else is nil, and the caller reads the list as a
        /// value by the general rules, which decide whether and why it is wrong.
        private static func requestedElements(_ scanner: inout JSONScanner) -> [RequestedElement]? {
            guard scanner.consume(UInt8(ascii: "[")) else { return nil }
            var elements: [RequestedElement] = []
            if scanner.consume(UInt8(ascii: "]")) { return elements }
            repeat {
                guard scanner.consume(UInt8(ascii: "{")) else { return nil }
                var namespace: String?, element: String?, retention: Retention?
                repeat {
                    guard let key = scanner.plainString(), scanner.consume(UInt8(ascii: ":")) else { return nil }
                    if same(key, "namespace"), namespace == nil {
                        guard let text = scanner.string(), !text.isEmpty else { return nil }
                        namespace = text
                    } else if same(key, "element"), element == nil {
                        guard let text = scanner.string(), !text.isEmpty else { return nil }
                        element = text
                    } else if same(key, "retention"), retention == nil {
                        guard let read = self.retention(&scanner) else { return nil }
                        retention = read
                    } else {
                        return nil
                    }
                } while scanner.consume(UInt8(ascii: ","))
                guard scanner.consume(UInt8(ascii: "}")), let namespace, let element, let retention else { return nil }
                elements.append(RequestedElement(namespace: namespace, element: element, retention: retention))
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "]")) else { return nil }
            return elements
        }

        private static func retention(_ scanner: inout JSONScanner) -> Retention? {
            guard scanner.consume(UInt8(ascii: "{")) else { return nil }
            var intent: String?, days: Int?
            repeat {
                guard let key = scanner.plainString(), scanner.consume(UInt8(ascii: ":")) else { return nil }
                if same(key, "intent"), intent == nil {
                    guard let text = scanner.string() else { return nil }
                    intent = text
                } else if same(key, "days"), days == nil {
                    guard let count = scanner.positiveInteger(), count <= Retention.maximumDays else { return nil }
                    days = count
                } else {
                    return nil
                }
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "}")), let intent else { return nil }
            switch (intent, days) {
            case ("willNotStore", nil): return .willNotStore
            case ("mayStore", let days): return .mayStore(days: days)
            default: return nil
            }
        }

        /// A base64 field's bytes, decoded from the record without a `String`
        /// of them. Base64's alphabets hold no quote, control or non-ASCII
        /// byte, so when the raw bytes up to the next quote hold no backslash,
        /// decoding them succeeds exactly when the field is a plain string of
        /// base64. With a backslash (`\/` from encoders that escape slashes)
        /// the string is read with its escapes, as the general reader reads it.
        private static func base64(_ scanner: inout JSONScanner, url: Bool) -> [UInt8]? {
            var escaped = scanner
            guard let raw = scanner.uncheckedString(), !raw.isEmpty else { return nil }
            guard let base = raw.baseAddress, memchr(base, Int32(UInt8(ascii: "\\")), raw.count) == nil else {
                guard let text = escaped.string(), !text.isEmpty else { return nil }
                scanner = escaped
                return url ? Base64.decodeURL(text) : Base64.decodeStandard(text)
            }
            return url ? Base64.decodeURL(raw) : Base64.decodeStandard(raw)
        }

        func request(id: String, source: String, time: Date) -> VerificationRequest? {
            guard let flow, let tenant, tenant.utf8.count <= VerificationRequest.maxTenantLength else { return nil }
            let required = EventCommonForm.required(flow)
            guard present & required == required, present & ~(required | EventCommonForm.optional(flow)) == 0 else { return nil }
            let input: VerificationRequest.Input
            switch flow {
            case .appleWalletApp:
                guard let payload, let nonce, let nonceText, let merchantID else { return nil }
                input = .appleWalletApp(payload: payload, nonce: nonce, nonceText: nonceText, merchantID: merchantID)
            case .appleWalletWeb:
                guard let response, let encryptionInfo, let encryptionInfoBytes, let origin else { return nil }
                input = .appleWalletWeb(response: response, encryptionInfo: encryptionInfo, encryptionInfoBytes: encryptionInfoBytes, origin: origin)
            case .isoDeviceResponse:
                guard let payload, let sessionTranscript else { return nil }
                input = .isoDeviceResponse(payload: payload, sessionTranscript: sessionTranscript, ephemeralReaderKey: ephemeralReaderKey)
            case .openID4VPDCAPI:
                return nil
            }
            return VerificationRequest(id: id, source: source, time: time, tenant: tenant, input: input, requestedElements: requestedElements)
        }
    }
}

/// Keys the reader knows; each case is named as its key is.
private protocol KnownKey: CaseIterable {
    /// Every key and its name's bytes (`names()`), stored: `allCases` is
    /// built anew on every use, and the keys are looked up for every member.
    static var table: [([UInt8], Self)] { get }
}

extension KnownKey {
    static func names() -> [([UInt8], Self)] {
        allCases.map { (Array(String(describing: $0).utf8), $0) }
    }

    /// The key whose name is `bytes`.
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        for (name, key) in Self.table where bytes.elementsEqual(name) {
            self = key
            return
        }
        return nil
    }
}

/// Whether `bytes` are exactly the literal's bytes.
private func same(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
    bytes.count == literal.utf8CodeUnitCount && bytes.elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
}
