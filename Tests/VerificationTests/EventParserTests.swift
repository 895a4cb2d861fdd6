import Foundation
import JSON
import Testing
@testable import Verification

/// The event parser's strictness, rule by rule, with the exact rejection
/// details (stable texts that name fields and never quote values).
@Suite struct EventParserTests {
    static let attributes = #""specversion":"1.0","id":"e1","source":"/s","type":"veridoc.verification.requested.v1","time":"2025-06-15T14:13:20Z","datacontenttype":"application/json""#
    static let appData = #""tenant":"acme","flow":"apple-wallet-app","payload":"AAEC","nonce":"AAEC","merchantId":"m""#
    static let webData = #""tenant":"acme","flow":"apple-wallet-web","response":"AAEC","encryptionInfo":"AAEC","origin":"https://o""#
    static let isoData = #""tenant":"acme","flow":"iso-device-response","payload":"AAEC","sessionTranscript":"AAEC""#

    static func event(attributes: String = attributes, data: String) -> [UInt8] {
        Array("{\(attributes),\"data\":\(data)}".utf8)
    }

    static func app(_ extra: String) -> [UInt8] { event(data: "{\(appData)\(extra)}") }

    static func rejection(_ bytes: [UInt8], parser: EventParser = EventParser()) -> EventRejection? {
        if case .failure(let rejection) = parser.parse(json: bytes) { return rejection }
        return nil
    }

    static func detail(_ bytes: [UInt8]) -> String? { rejection(bytes)?.detail }

    @Test func wellFormedEventsOfEveryFlowParse() throws {
        for data in [Self.appData, Self.webData, Self.isoData, Self.isoData + #","ephemeralReaderKey":"AAEC""#] {
            let request = try EventParser().parse(json: Self.event(data: "{\(data)}")).get()
            #expect(request.id == "e1" && request.source == "/s" && request.tenant == "acme")
            #expect(request.time == Date(timeIntervalSince1970: 1_749_996_800))
        }
        let request = try EventParser().parse(json: Self.app("")).get()
        guard case .appleWalletApp(let payload, let nonce, let nonceText, let merchantID) = request.input else {
            Issue.record("wrong input")
            return
        }
        #expect(payload == [0, 1, 2] && nonce == [0, 1, 2] && nonceText == "AAEC" && merchantID == "m")
    }

    @Test func eventLevelRejections() {
        #expect(Self.detail(Array("[]".utf8)) == "event is not a JSON object")
        #expect(Self.detail(Array("{".utf8)) == "event is not a JSON object")
        #expect(Self.detail(Array("\"text\"".utf8)) == "event is not a JSON object")
        #expect(Self.detail(Array(#"{"id":"a","id":"b"}"#.utf8)) == "event is not a JSON object", "duplicate keys are not JSON here")
        #expect(Self.detail(Self.app("") + Array(" x".utf8)) == "event is not a JSON object", "trailing data")
        #expect(Self.rejection(Self.app(""), parser: EventParser(maxEventBytes: 10))?.detail == "event of \(Self.app("").count) bytes exceeds 10")
    }

    @Test func attributeRejections() {
        func with(_ name: String, _ value: String?) -> [UInt8] {
            var members = Self.attributes.split(separator: ",").map(String.init).filter { !$0.hasPrefix("\"\(name)\":") }
            if let value { members.append("\"\(name)\":\(value)") }
            return Self.event(attributes: members.joined(separator: ","), data: "{\(Self.appData)}")
        }
        let idDetail = "id is missing or not a non-empty string"
        #expect(Self.detail(with("id", nil)) == idDetail)
        #expect(Self.detail(with("id", "\"\"")) == idDetail)
        #expect(Self.detail(with("id", "5")) == idDetail)
        #expect(Self.detail(with("specversion", "\"1\"")) == #"specversion is not "1.0""#)
        #expect(Self.detail(with("specversion", "1.0")) == #"specversion is not "1.0""#)
        #expect(Self.detail(with("type", "\"other\"")) == "type is not veridoc.verification.requested.v1")
        #expect(Self.detail(with("source", nil)) == "source is missing")
        #expect(Self.detail(with("source", "\"\"")) == "source is missing")
        #expect(Self.detail(with("time", "\"yesterday\"")) == "time is missing or not RFC 3339")
        #expect(Self.detail(with("time", "1750000000")) == "time is missing or not RFC 3339")
        #expect(Self.detail(with("datacontenttype", "\"text/plain\"")) == "datacontenttype is not application/json")
        #expect(Self.detail(with("datacontenttype", nil)) == "datacontenttype is not application/json")
    }

    @Test func dataRejectionsAreAttributed() {
        #expect(Self.detail(Self.event(data: "\"x\"")) == "data is not a JSON object")
        #expect(Self.detail(Self.event(data: "null")) == "data is not a JSON object")
        let noTenant = Self.rejection(Self.event(data: #"{"flow":"apple-wallet-app"}"#))
        #expect(noTenant == EventRejection(id: "e1", tenant: nil, flow: .appleWalletApp, detail: "data.tenant is missing"))
        #expect(Self.detail(Self.event(data: #"{"tenant":5,"flow":"apple-wallet-app"}"#)) == "data.tenant is missing")
        #expect(Self.detail(Self.event(data: #"{"tenant":"","flow":"apple-wallet-app"}"#)) == "data.tenant is empty or longer than 256 bytes")
        // A tenant is an indexed key: past 256 bytes it is not read, and not reported either.
        let longTenant = String(repeating: "é", count: 129)
        #expect(Self.rejection(Self.event(data: "{\"tenant\":\"\(longTenant)\",\"flow\":\"apple-wallet-app\"}"))
                == EventRejection(id: "e1", tenant: nil, flow: .appleWalletApp, detail: "data.tenant is empty or longer than 256 bytes"))
        let longest = String(repeating: "é", count: 128)
        #expect(Self.rejection(Self.event(data: "{\"tenant\":\"\(longest)\",\"flow\":\"fax\"}"))?.tenant == longest)
        let badFlow = Self.rejection(Self.event(data: #"{"tenant":"acme","flow":"fax"}"#))
        #expect(badFlow == EventRejection(id: "e1", tenant: "acme", flow: nil, detail: "data.flow is not one of apple-wallet-app, apple-wallet-web, iso-device-response, openid4vp-dc-api"))
    }

    @Test func fieldRejections() {
        let app = Self.appData
        func data(_ text: String) -> String? { Self.detail(Self.event(data: "{\(text)}")) }
        #expect(data(app.replacingOccurrences(of: #""payload":"AAEC""#, with: #""payload":"_-8=""#)) == "data.payload is not standard base64")
        #expect(data(app.replacingOccurrences(of: #""payload":"AAEC""#, with: #""payload":"AAE""#)) == "data.payload is not standard base64")
        #expect(data(app.replacingOccurrences(of: #""payload":"AAEC""#, with: #""payload":5"#)) == "data.payload is missing or not a non-empty string")
        #expect(data(app.replacingOccurrences(of: #""payload":"AAEC""#, with: #""payload":"""#)) == "data.payload is missing or not a non-empty string")
        #expect(data(app.replacingOccurrences(of: #""payload":"AAEC""#, with: #""payload":["AAEC"]"#)) == "data.payload is missing or not a non-empty string")
        let longNonce = Data(repeating: 1, count: 65).base64EncodedString()
        #expect(data(app.replacingOccurrences(of: #""nonce":"AAEC""#, with: "\"nonce\":\"\(longNonce)\"")) == "data.nonce must be 1 to 64 bytes")
        #expect(data(app.replacingOccurrences(of: #","merchantId":"m""#, with: "")) == "data.merchantId is missing or not a non-empty string")
        #expect(data(app + #","zeta":1,"extra":null"#) == "data.extra is not a field of the apple-wallet-app flow")
        #expect(data(app + #","ephemeralReaderKey":"AAEC""#) == "data.ephemeralReaderKey is not a field of the apple-wallet-app flow")

        let web = Self.webData
        #expect(data(web.replacingOccurrences(of: #""response":"AAEC""#, with: #""response":"+/8=""#)) == "data.response is not base64url")
        #expect(data(web.replacingOccurrences(of: #""encryptionInfo":"AAEC""#, with: #""encryptionInfo":"A+/B""#)) == "data.encryptionInfo is not base64url")
        #expect(data(web.replacingOccurrences(of: #","origin":"https://o""#, with: "")) == "data.origin is missing or not a non-empty string")

        let iso = Self.isoData
        #expect(data(iso.replacingOccurrences(of: #""sessionTranscript":"AAEC""#, with: #""sessionTranscript":true"#)) == "data.sessionTranscript is missing or not a non-empty string")
        #expect(data(iso + #","ephemeralReaderKey":"_-8=""#) == "data.ephemeralReaderKey is not standard base64")
        // A null reader key is not read as absent-and-fine: it is a field left over.
        #expect(data(iso + #","ephemeralReaderKey":null"#) == "data.ephemeralReaderKey is not a field of the iso-device-response flow")
        // A lookalike name (Kelvin sign for K) is not the field.
        #expect(data(iso + ",\"ephemeralReader\u{212A}ey\":\"AAEC\"") == "data.ephemeralReader\u{212A}ey is not a field of the iso-device-response flow")
    }

    @Test func requestedElementRules() throws {
        func elements(_ json: String) -> Result<[RequestedElement], EventRejection> {
            EventParser().parse(json: Self.app(",\"requestedElements\":\(json)")).map(\.requestedElements)
        }
        func detail(_ json: String) -> String? {
            if case .failure(let rejection) = elements(json) { return rejection.detail }
            return nil
        }
        let ns = #""namespace":"org.iso.18013.5.1","element":"family_name""#
        #expect(try elements("null").get().isEmpty)
        #expect(try elements("[]").get().isEmpty)
        #expect(try elements("[{\(ns),\"retention\":{\"intent\":\"willNotStore\"}}]").get().map(\.retention) == [.willNotStore])
        for (days, expected) in [("1", 1), ("30", 30), ("2.0", 2), ("1e1", 10), ("100e-2", 1), ("1000000", 1_000_000), ("1e6", 1_000_000)] {
            #expect(try elements("[{\(ns),\"retention\":{\"intent\":\"mayStore\",\"days\":\(days)}}]").get().map(\.retention) == [.mayStore(days: expected)], "\(days)")
        }
        #expect(try elements("[{\(ns),\"retention\":{\"intent\":\"mayStore\"}}]").get().map(\.retention) == [.mayStore(days: nil)])

        #expect(detail("{}") == "data.requestedElements is not an array")
        #expect(detail("[1]") == "data.requestedElements[0] needs namespace and element strings")
        #expect(detail(#"[{"namespace":"n"}]"#) == "data.requestedElements[0] needs namespace and element strings")
        #expect(detail(#"[{"namespace":"n","element":""}]"#) == "data.requestedElements[0] needs namespace and element strings")
        #expect(detail("[{\(ns),\"retention\":{\"intent\":\"willNotStore\"},\"x\":1}]") == "data.requestedElements[0] has unknown fields")
        #expect(detail("[{\(ns)}]") == "data.requestedElements[0].retention needs an intent")
        #expect(detail("[{\(ns),\"retention\":null}]") == "data.requestedElements[0].retention needs an intent")
        #expect(detail("[{\(ns),\"retention\":{\"intent\":5}}]") == "data.requestedElements[0].retention needs an intent")
        #expect(detail("[{\(ns),\"retention\":{\"intent\":\"willNotStore\",\"days\":1}}]") == "data.requestedElements[0].retention willNotStore takes no other fields")
        #expect(detail("[{\(ns),\"retention\":{\"intent\":\"mayStore\",\"x\":1}}]") == "data.requestedElements[0].retention has unknown fields")
        #expect(detail("[{\(ns),\"retention\":{\"intent\":\"keep\"}}]") == "data.requestedElements[0].retention.intent is not willNotStore or mayStore")
        let daysDetail = "data.requestedElements[1].retention.days must be a whole number of days from 1 to 1000000"
        let first = "{\(ns),\"retention\":{\"intent\":\"willNotStore\"}}"
        // Past a million days the expiry would outrun what the store holds (3e9 days was a poison batch).
        for days in ["true", "false", "2.5", "0", "-1", "\"3\"", "null", "[1]", "1000001", "3000000000", "1e15", "1e300", "1.0000001"] {
            #expect(detail("[\(first),{\(ns),\"retention\":{\"intent\":\"mayStore\",\"days\":\(days)}}]") == daysDetail, "days \(days)")
        }
        #expect(detail("[\(first),{\(ns),\"retention\":{\"intent\":\"mayStore\",\"days\":3,\"x\":1}}]") == daysDetail)
    }

    @Test func binaryModeAttributesGoThroughTheSameRules() throws {
        let attributes: JSONObject = [
            "specversion": "1.0", "id": "b1", "source": "/s", "type": "veridoc.verification.requested.v1",
            "time": "2025-06-15T14:13:20Z", "datacontenttype": "application/json",
        ]
        let data = try JSONParser().parse("{\(Self.isoData)}")
        #expect(try EventParser().parse(attributes: attributes, data: data).get().id == "b1")
        if case .failure(let rejection) = EventParser().parse(attributes: attributes, data: nil) {
            #expect(rejection.detail == "data is not a JSON object")
        } else {
            Issue.record("accepted an event without data")
        }
    }
}
