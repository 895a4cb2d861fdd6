import Foundation
import JSON
import Testing
@testable import Verification

/// The one-pass reader of the common event form against the general reader
/// (a `JSONValue` tree, then `parse(attributes:data:)`): whatever the fast
/// reader accepts, the general one must accept as the same request; whatever
/// it does not, goes to the general reader, so rejections and their details
/// cannot change. The valid shapes below must take the fast path, or the
/// saving would silently be lost.
@Suite struct EventCommonFormTests {
    static let attributes = #""specversion":"1.0","id":"e1","source":"/s","type":"veridoc.verification.requested.v1","time":"2025-06-15T14:13:20.5Z","datacontenttype":"application/json""#
    static let requested = #""requestedElements":[{"namespace":"org.iso.18013.5.1","element":"given_name","retention":{"intent":"mayStore","days":30}},{"namespace":"org.iso.18013.5.1","element":"portrait","retention":{"intent":"willNotStore"}},{"namespace":"ns","element":"e","retention":{"intent":"mayStore"}}]"#
    static let app = #""tenant":"acme","flow":"apple-wallet-app","payload":"AAECAwQF/+8=","nonce":"AAEC","merchantId":"m""#
    static let web = #""tenant":"acme","flow":"apple-wallet-web","response":"AAECAwQF_-8","encryptionInfo":"AAEC","origin":"https://o""#
    static let iso = #""tenant":"acme","flow":"iso-device-response","payload":"AAECAwQF/+8=","sessionTranscript":"AAEC""#

    static func event(_ attributes: String = attributes, data: String) -> String {
        "{\(attributes),\"data\":{\(data)}}"
    }

    /// The general reader alone, as `EventParser.parse(json:)` read every event before.
    static func general(_ bytes: [UInt8]) -> VerificationRequest? {
        guard let object = (try? JSONParser().parse(bytes))?.objectValue else { return nil }
        return try? EventParser().parse(attributes: object, data: object["data"]).get()
    }

    static func same(_ a: VerificationRequest, _ b: VerificationRequest) -> Bool {
        guard a.id.utf8.elementsEqual(b.id.utf8), a.source.utf8.elementsEqual(b.source.utf8), a.time == b.time,
              a.tenant.utf8.elementsEqual(b.tenant.utf8), a.requestedElements == b.requestedElements
        else { return false }
        switch (a.input, b.input) {
        case let (.appleWalletApp(p1, n1, t1, m1), .appleWalletApp(p2, n2, t2, m2)):
            return p1 == p2 && n1 == n2 && t1.utf8.elementsEqual(t2.utf8) && m1.utf8.elementsEqual(m2.utf8)
        case let (.appleWalletWeb(r1, e1, b1, o1), .appleWalletWeb(r2, e2, b2, o2)):
            return r1 == r2 && e1.utf8.elementsEqual(e2.utf8) && b1 == b2 && o1.utf8.elementsEqual(o2.utf8)
        case let (.isoDeviceResponse(p1, s1, k1), .isoDeviceResponse(p2, s2, k2)):
            return p1 == p2 && s1 == s2 && k1 == k2
        default:
            return false
        }
    }

    /// The contract, for one input: the fast reader's request (if any) is the general reader's.
    @discardableResult
    static func agree(_ bytes: [UInt8], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) -> VerificationRequest? {
        let fast = EventParser().commonForm(bytes)
        if let fast {
            // The worker skips its record UTF-8 check for what this reader reads.
            #expect(isValidUTF8(bytes), "\(context)", sourceLocation: sourceLocation)
            let general = Self.general(bytes)
            #expect(general.map { same(fast, $0) } == true, "\(context)", sourceLocation: sourceLocation)
        }
        // And `parse(json:)`, which tries the fast reader first, answers as the general reader did.
        switch EventParser().parse(json: bytes) {
        case .success(let request):
            #expect(Self.general(bytes).map { same(request, $0) } == true, "\(context)", sourceLocation: sourceLocation)
        case .failure:
            #expect(Self.general(bytes) == nil, "\(context)", sourceLocation: sourceLocation)
        }
        return fast
    }

    static var validEvents: [String] {
        [
            event(data: app), event(data: app + "," + requested), event(data: web), event(data: web + "," + requested),
            event(data: iso), event(data: iso + #","ephemeralReaderKey":"AAEC""#), event(data: requested + "," + iso),
            // Members in any order, data first.
            #"{"data":{"# + app + #"},"# + attributes + "}",
            // Whitespace wherever the grammar allows it.
            " \n{\t\"id\" : \"e1\" ,\r\n \"specversion\":\"1.0\", \"source\" :\"/s\",\"type\":\"veridoc.verification.requested.v1\",\"time\":\"2025-06-15T14:13:20Z\",\"datacontenttype\":\"application/json\", \"data\" : { \"tenant\" : \"acme\" , \"flow\":\"apple-wallet-app\",\"payload\" : \"AAEC\" ,\"nonce\":\"AAEC\",\"merchantId\":\"m\" , \"requestedElements\" : [ ] } } \n",
            // Extension attributes of every kind of value.
            event(Self.attributes + #","subject":"x","traceparent":"00-ab","ext":{"a":[1,-2.5e3,true,false,null,{"b":"\u00e9\n"}],"c":{}},"n":7"#, data: app),
            // Escapes in values: slashes escaped as some encoders do (in base64 too), a \u escape, non-ASCII text.
            event(#""specversion":"1.0","id":"e\u00e9\"1","source":"https:\/\/example.com\/s","type":"veridoc.verification.requested.v1","time":"2025-06-15T14:13:20Z","datacontenttype":"application\/json""#,
                  data: #""tenant":"ac\u006De","flow":"apple-wallet-app","payload":"AAECAwQF\/+8=","nonce":"AAE\u0043","merchantId":"m\u00fcnchen""#),
            event(data: #""tenant":"acme","flow":"iso-device-response","payload":"\u0041AEC","sessionTranscript":"AAEC","ephemeralReaderKey":"AA\/C""#),
            event(data: #""tenant":"Zoë","flow":"apple-wallet-web","response":"AAEC","encryptionInfo":"AAE","origin":"https://ö""#),
            // requestedElements in other forms the general rules accept (read by them, within the fast reader).
            event(data: app + #", "requestedElements" : [ { "retention" : { "days" : 1000000 , "intent" : "mayStore" } , "element" : "eé" , "namespace" : "n" } ]"#),
            event(data: app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":2.0}},{"namespace":"n","element":"f","retention":{"intent":"mayStore","days":3e0}}]"#),
            event(data: app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":1}}]"#),
            event(data: app + #","requestedElements":[]"#),
        ]
    }

    @Test func validEventsTakeTheFastPathAndReadTheSame() {
        for (index, text) in Self.validEvents.enumerated() {
            let bytes = Array(text.utf8)
            #expect(Self.general(bytes) != nil, "valid event \(index): \(String(describing: EventParserTests.rejection(bytes)?.detail))")
            #expect(Self.agree(bytes, "valid event \(index)") != nil, "valid event \(index) missed the fast path")
        }
    }

    /// Each of these the fast reader must leave to the general one (most are
    /// rejections, some are valid events in a rarer form).
    @Test func everythingElseGoesToTheGeneralReader() {
        let cases: [String] = [
            // Duplicate keys, at every level the fast reader walks and below it.
            "{" + Self.attributes + #","id":"e2","data":{"# + Self.app + "}}",
            Self.event(data: Self.app + #","payload":"AAEC""#),
            "{" + Self.attributes + #","data":{"# + Self.app + #"},"data":{"# + Self.app + "}}",
            Self.event(Self.attributes + #","x":1,"x":2"#, data: Self.app),
            Self.event(Self.attributes + #","x":{"a":1,"a":2}"#, data: Self.app),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","element":"f"}]"#),
            // Escaped keys (valid, but rare: the general reader takes them).
            "{" + Self.attributes.replacingOccurrences(of: #""id""#, with: #""\u0069d""#) + #","data":{"# + Self.app + "}}",
            Self.event(data: Self.app.replacingOccurrences(of: #""nonce""#, with: #""non\u0063e""#)),
            // Nulls, missing, unknown and misplaced fields.
            Self.event(data: Self.iso + #","ephemeralReaderKey":null"#),
            Self.event(data: Self.app + #","requestedElements":null"#),
            Self.event(data: Self.app + #","requestedElements":{}"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":2.5}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","x":1}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":0}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":-1}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":1000000000000000}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":1000001}}]"#),
            Self.event(data: Self.app.replacingOccurrences(of: #""tenant":"acme""#, with: "\"tenant\":\"\(String(repeating: "t", count: 257))\"")),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":true}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","days":"2"}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"willNotStore","days":2}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"keep"}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","x":1}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore","intent":"mayStore"}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"","retention":{"intent":"mayStore"}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","namespace":"n","element":"e","retention":{"intent":"mayStore"}}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e"}]"#),
            Self.event(data: Self.app + #","requestedElements":[{}]"#),
            Self.event(data: Self.app + #","requestedElements":[{"namespace":"n","element":"e","retention":{"intent":"mayStore"}},]"#),
            Self.event(data: Self.app + #","extra":"x""#),
            Self.event(data: Self.app + #","ephemeralReaderKey":"AAEC""#),
            Self.event(data: Self.web + #","payload":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"apple-wallet-app","payload":"AAEC","nonce":"AAEC""#),
            Self.event(data: #""flow":"iso-device-response","payload":"AAEC","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"","flow":"iso-device-response","payload":"AAEC","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"other","payload":"AAEC","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":7,"flow":"iso-device-response","payload":"AAEC","sessionTranscript":"AAEC""#),
            #"{"# + Self.attributes + #","data":"x"}"#,
            "{" + Self.attributes + "}",
            // Base64 the strict decoder refuses, or empty.
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AAE","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AA=C","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AAF=","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AA EC","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AAECAwQF_-8=","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"apple-wallet-web","response":"AAECAwQF/+8","encryptionInfo":"AAEC","origin":"o""#),
            Self.event(data: #""tenant":"acme","flow":"apple-wallet-web","response":"AAEC","encryptionInfo":"A","origin":"o""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AAEC\"","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":"AA\u0000C","sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"iso-device-response","payload":7,"sessionTranscript":"AAEC""#),
            Self.event(data: #""tenant":"acme","flow":"apple-wallet-app","payload":"AAEC","nonce":""# + String(repeating: "A", count: 88) + #"","merchantId":"m""#),
            Self.event(data: #""tenant":"acme","flow":"apple-wallet-app","payload":"AAEC","nonce":"","merchantId":"m""#),
            // Attributes.
            Self.event(Self.attributes.replacingOccurrences(of: #""1.0""#, with: #""1.1""#), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: "requested.v1", with: "requested.v2"), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: "2025-06-15T14:13:20.5Z", with: "2025-06-15 14:13:20Z"), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: "application/json", with: "application/cbor"), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: #""e1""#, with: #""""#), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: #""e1""#, with: "1"), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: #""/s""#, with: #""""#), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: #""specversion":"1.0","#, with: ""), data: Self.app),
            // Not one JSON object.
            Self.event(data: Self.app) + "x",
            Self.event(data: Self.app) + "{}",
            "\u{FEFF}" + Self.event(data: Self.app),
            "[" + Self.event(data: Self.app) + "]",
            "{}", "", "{", "{\"id\"", "{\"id\":}",
            Self.event(Self.attributes + #","deep":"# + String(repeating: "[", count: 70) + String(repeating: "]", count: 70), data: Self.app),
            Self.event(Self.attributes.replacingOccurrences(of: "/s", with: "/s\u{1}"), data: Self.app),
            Self.event(Self.attributes + #","x":tru"#, data: Self.app),
            Self.event(Self.attributes + #","x":01"#, data: Self.app),
            Self.event(Self.attributes + #","x":"\ud800""#, data: Self.app),
        ]
        for (index, text) in cases.enumerated() {
            #expect(Self.agree(Array(text.utf8), "case \(index)") == nil, "case \(index) took the fast path")
        }
        // Bytes that are not UTF-8, inside a value the fast reader reads.
        var invalid = Array(Self.event(data: Self.app).utf8)
        invalid[invalid.firstIndex(of: UInt8(ascii: "m"))!] = 0xFF
        #expect(Self.agree(invalid, "invalid UTF-8") == nil)
    }

    /// Every prefix of valid events, and every single-byte change to them by
    /// a byte that matters to the grammar: the readers never disagree.
    @Test func truncationsAndByteChangesAgree() {
        let replacements: [UInt8] = [0x22, 0x5C, 0x2C, 0x7D, 0x20, 0x00, 0xFF, UInt8(ascii: "/")]
        for text in Self.validEvents.prefix(4) + [Self.validEvents[Self.validEvents.count - 4]] {
            let bytes = Array(text.utf8)
            for end in 0..<bytes.count { Self.agree(Array(bytes[..<end]), "prefix \(end) of \(text)") }
            for position in bytes.indices {
                for byte in replacements where bytes[position] != byte {
                    var changed = bytes
                    changed[position] = byte
                    Self.agree(changed, "byte \(position) → \(byte) of \(text)")
                }
            }
        }
    }
}
