import Foundation
import HTTPService
import JSON
import SessionAPI
import Settings
import Testing

/// `requestableElements`: serve makes sessions only for what the tenant
/// lists, so a leaked API key cannot have the tenant's certificate ask a
/// wallet for anything else. Refused before any session is made.
@Suite struct RequestAllowlistTests {
    static let tenant = #"{"id": "acme", "merchantIds": ["m"], "teamId": "T", "trustAnchors": ["iaca.pem"], "#
        + #""apiKeys": ["\#(APIKeyring.setting(forKey: "vdk_allowlist-key"))"], "requestableElements": ["#
        + #"{"docType": "org.iso.18013.5.1.mDL", "namespace": "org.iso.18013.5.1", "elements": ["given_name", "age_over_21"]}]}"#

    static func create(_ body: String) throws -> (status: UInt32, error: String?, field: String?) {
        let api = SessionAPI(tenants: try WebReaderRequiredTests.load(tenant), rateLimit: (100, 100))
        let response = api.handle(HTTPRequest(method: "POST", path: "/v1/sessions",
                                              headers: ["Authorization": "Bearer vdk_allowlist-key", "Content-Type": "application/json"],
                                              body: Array(body.utf8)))
        let answer = (try? JSONParser().parse(response.body))?.objectValue
        return (response.status, answer?["error"]?.stringValue, answer?["field"]?.stringValue)
    }

    static func session(docType: String? = nil, elements: [(String, String)] = [], ages: [Int] = []) -> String {
        let keep = #"{"intent":"willNotStore"}"#
        var body = #"{"flow":"apple-wallet-app","merchantId":"m""#
        if let docType { body += #","docType":"\#(docType)""# }
        body += #","requestedElements":["# + elements.map { #"{"namespace":"\#($0.0)","element":"\#($0.1)","retention":\#(keep)}"# }
            .joined(separator: ",") + "]"
        body += #","ageAtLeast":["# + ages.map { #"{"age":\#($0),"retention":\#(keep)}"# }.joined(separator: ",") + "]}"
        return body
    }

    @Test func whatTheTenantListsGetsASessionAndNothingElseDoes() throws {
        // Listed: past the check, to the missing database (503).
        #expect(try Self.create(Self.session(elements: [("org.iso.18013.5.1", "given_name")], ages: [21])).status == 503)
        let refusals: [(String, String, String)] = [
            ("another docType", Self.session(docType: "eu.europa.ec.eudi.pid.1", elements: [("org.iso.18013.5.1", "given_name")]), "docType"),
            ("an element not listed", Self.session(elements: [("org.iso.18013.5.1", "given_name"), ("org.iso.18013.5.1", "portrait")]),
             "requestedElements[1]"),
            ("a listed element in another namespace", Self.session(elements: [("org.iso.18013.5.1.aamva", "given_name")]), "requestedElements[0]"),
            ("an element that differs by case", Self.session(elements: [("org.iso.18013.5.1", "Given_name")]), "requestedElements[0]"),
            ("an age whose element is not listed", Self.session(elements: [("org.iso.18013.5.1", "given_name")], ages: [21, 18]), "ageAtLeast[1]"),
        ]
        for (name, body, field) in refusals {
            let answer = try Self.create(body)
            #expect(answer.status == 400 && answer.error == "invalid_field" && answer.field == field, "\(name): \(answer)")
        }
    }

    @Test func theSettingIsReadStrictly() throws {
        let cases: [(String, String)] = [
            ("[]", "tenants[0].requestableElements: at least one entry; leave the setting out"),
            (#"[{"docType": "d", "namespace": "n", "elements": []}]"#, "tenants[0].requestableElements[0].elements: at least one element is required"),
            (#"[{"docType": "d", "elements": ["e"]}]"#, "tenants[0].requestableElements[0].namespace: required"),
            (#"[{"docType": "d", "namespace": "n", "elements": ["e"], "element": "x"}]"#, "tenants[0].requestableElements[0].element: unknown setting"),
            (#"[{"docType": "d", "namespace": "n", "elements": ["e"]}, {"docType": "d", "namespace": "n", "elements": ["f"]}]"#,
             "tenants[0].requestableElements[1]: each docType and namespace once"),
        ]
        for (setting, message) in cases {
            let text = #"{"tenants": [{"id": "acme", "trustAnchors": ["a"], "requestableElements": \#(setting)}]}"#
            let root = try JSONParser().parse(text)
            let result = Result { () throws(ConfigError) in try VeridocSettings(root, baseURL: URL(fileURLWithPath: "/")) }
            guard case .failure(let error) = result else {
                Issue.record("\(setting) was accepted")
                continue
            }
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }
}
