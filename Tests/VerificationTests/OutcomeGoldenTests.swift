import CBOR
import Crypto
import Foundation
import JSON
@testable import MDoc
import Testing
@testable import Verification

/// The outcome's exact bytes, written out: consumers dedupe and diff outcomes
/// by their bytes, so the streamed writer must not drift from the format, not
/// even in escaping or member order. Each shape is also checked against the
/// tree writer (`jsonValue.jsonString()`), which the Foundation comparison in
/// OutcomeEncodingTests pins to `JSONSerialization`'s output.
@Suite struct OutcomeGoldenTests {
    static let at = Date(timeIntervalSince1970: 1_648_771_500)  // 2022-04-01T00:05:00Z
    static let value = try! CBORDecoder().decode([0x63, 0x41, 0x42, 0x43])  // "ABC"
    static let mDL = "org.iso.18013.5.1"

    static func result(id: String?, tenant: String?, flow: Flow?, report: CheckReport, documents: [DocumentSummary] = [],
                       requested: [RequestedElement] = []) -> VerificationResult {
        VerificationResult(requestID: id, tenant: tenant, flow: flow, verifiedAt: at, eventTime: at, report: report, documents: documents,
                           requestedElements: requested, replayToken: nil)
    }

    /// The outcome's `checks` array, generated from the policy's order: every
    /// check not named here is skipped.
    static func checks(passing: [CheckName] = [], failing: [CheckName] = []) -> String {
        let entries = CheckName.order.map { name in
            let status = failing.contains(name) ? "failed" : passing.contains(name) ? "passed" : "skipped"
            return #"{"name":"\#(name.rawValue)","status":"\#(status)"}"#
        }
        return "[" + entries.joined(separator: ",") + "]"
    }

    static var allPassed: CheckReport {
        var report = CheckReport()
        for check in CheckName.order { report.pass(check) }
        return report
    }

    static func document(subject: String? = "CN=Test DS", elements: [String]) -> DocumentSummary {
        DocumentSummary(docType: "org.iso.18013.5.1.mDL", issuerSubject: subject, issuerCountry: "US", signed: at.addingTimeInterval(-86_400),
                        validFrom: at.addingTimeInterval(-86_400.125), validUntil: at.addingTimeInterval(86_400 * 365),
                        elements: elements.map { DisclosedElement(namespace: mDL, identifier: $0, value: value) })
    }

    static func check(_ outcome: OutcomeEvent, _ golden: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let encoded = outcome.encoded()
        #expect(encoded.json == golden, sourceLocation: sourceLocation)
        #expect(outcome.jsonValue.jsonString() == golden, sourceLocation: sourceLocation)
        #expect(try JSONParser().parse(golden) == outcome.jsonValue, sourceLocation: sourceLocation)
        #expect(!encoded.hasClaims, sourceLocation: sourceLocation)
    }

    @Test func verifiedWithRetentionOfEveryKind() throws {
        let requested = [
            RequestedElement(namespace: Self.mDL, element: "family_name", retention: .mayStore(days: 30)),
            RequestedElement(namespace: Self.mDL, element: "given_name", retention: .mayStore(days: nil)),
            RequestedElement(namespace: Self.mDL, element: "birth_date", retention: .willNotStore),
            // Not returned: withheld.
            RequestedElement(namespace: Self.mDL, element: "resident_city", retention: .willNotStore),
        ]
        var document = Self.document(elements: ["family_name", "given_name", "birth_date", "portrait"])
        document.deviceAuthentication = .mac(reader: "reader \"7\"")
        document.status = .undetermined(StatusUndetermined(step: "fetch", detail: "the list server did not answer"))
        let result = Self.result(id: "req-1", tenant: "acme", flow: .appleWalletApp, report: Self.allPassed,
                                 documents: [document],
                                 requested: requested)
        try Self.check(OutcomeEvent(result), #"{"data":{"checks":\#(Self.checks(passing: CheckName.order)),"document":{"deviceAuthentication":{"method":"mac","reader":"reader \"7\""},"docType":"org.iso.18013.5.1.mDL","issuer":{"country":"US","subject":"CN=Test DS"},"mso":{"signed":"2022-03-31T00:05:00Z","validFrom":"2022-03-31T00:04:59.875Z","validUntil":"2023-04-01T00:05:00Z"},"status":{"cause":"fetch","state":"undetermined"}},"elements":[{"element":"family_name","namespace":"org.iso.18013.5.1","retention":{"days":30,"intent":"mayStore"},"typed":false},{"element":"given_name","namespace":"org.iso.18013.5.1","retention":{"intent":"mayStore"},"typed":false},{"element":"birth_date","namespace":"org.iso.18013.5.1","retention":{"intent":"willNotStore"},"typed":false},{"element":"portrait","namespace":"org.iso.18013.5.1","retention":null,"typed":false}],"flow":"apple-wallet-app","reasons":[],"requestId":"req-1","status":"undetermined","tenant":"acme","verdict":"verified","withheld":[{"element":"resident_city","namespace":"org.iso.18013.5.1"}]},"datacontenttype":"application/json","id":"GOLDEN-ID","source":"urn:veridoc:verifier","specversion":"1.0","subject":"req-1","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#.replacingOccurrences(of: "GOLDEN-ID", with: OutcomeEvent.id(forRequest: "req-1")))
    }

    @Test func rejectedWithSeveralReasonsAndNulls() throws {
        var report = CheckReport()
        report.pass(.eventStructure)
        report.fail(.msoValidity, .msoExpired, "MSO validUntil is before the verification time")
        report.fail(.issuerChain, .issuerUntrusted, "no trusted root")
        report.fail(.requestAge, .requestExpired, "request is 301 s old (limit 300 s)")
        let result = Self.result(id: "req-2", tenant: nil, flow: nil, report: report,
                                 documents: [DocumentSummary(docType: "x", issuerSubject: nil, issuerCountry: nil, signed: nil, validFrom: nil,
                                                             validUntil: nil, elements: [])])
        try Self.check(OutcomeEvent(result, source: "urn:test"), #"{"data":{"checks":\#(Self.checks(passing: [.eventStructure], failing: [.issuerChain, .msoValidity, .requestAge])),"document":{"deviceAuthentication":null,"docType":"x","issuer":{"country":null,"subject":null},"mso":{"signed":null,"validFrom":null,"validUntil":null},"status":null},"elements":[],"flow":null,"reasons":[{"code":"issuer.untrusted","detail":"no trusted root"},{"code":"mso.expired","detail":"MSO validUntil is before the verification time"},{"code":"request.expired","detail":"request is 301 s old (limit 300 s)"}],"requestId":"req-2","status":null,"tenant":null,"verdict":"rejected","withheld":[]},"datacontenttype":"application/json","id":"0fd9a1fc-4c10-86a7-b6ed-d9b51b1fa0ec","source":"urn:test","specversion":"1.0","subject":"req-2","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#)
    }

    @Test func noRequestAndNoDocument() throws {
        var report = CheckReport()
        report.fail(.eventStructure, .eventInvalid, "event is not a JSON object")
        try Self.check(OutcomeEvent(Self.result(id: nil, tenant: nil, flow: nil, report: report)), #"{"data":{"checks":\#(Self.checks(failing: [.eventStructure])),"document":null,"elements":[],"flow":null,"reasons":[{"code":"event.invalid","detail":"event is not a JSON object"}],"requestId":"","status":null,"tenant":null,"verdict":"rejected","withheld":[]},"datacontenttype":"application/json","id":"ad997981-d17b-881e-b6ed-1a68c191dec9","source":"urn:veridoc:verifier","specversion":"1.0","subject":"","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#)
    }

    /// Every escape JSON needs, text beyond ASCII (as UTF-8, never `\u`), and
    /// `/` left alone, in long strings (the writer copies plain runs eight
    /// bytes at a time) and short ones, at the start, middle and end.
    @Test func textThatNeedsEscaping() throws {
        var report = CheckReport()
        report.pass(.eventStructure)
        report.fail(.eventTenant, .eventUnknownTenant, "tenant \"Zoë\\Co\"\u{1}\u{1F}\u{7F} is not configured\t\r\n\u{8}\u{C}/é🙂")
        let id = "\"id/with\\ëvery\u{0}thing\u{1F}🙂 and a long plain tail of ASCII\""
        let result = Self.result(id: id, tenant: "tënant\n", flow: .isoDeviceResponse, report: report,
                                 documents: [Self.document(subject: "CN=\"Ünïcode\" DS\\", elements: ["ä\"", "plain_but_longer_than_eight"])])
        try Self.check(OutcomeEvent(result, source: "urn:x/\"y\""), #"{"data":{"checks":\#(Self.checks(passing: [.eventStructure], failing: [.eventTenant])),"document":{"deviceAuthentication":null,"docType":"org.iso.18013.5.1.mDL","issuer":{"country":"US","subject":"CN=\"Ünïcode\" DS\\"},"mso":{"signed":"2022-03-31T00:05:00Z","validFrom":"2022-03-31T00:04:59.875Z","validUntil":"2023-04-01T00:05:00Z"},"status":null},"elements":[{"element":"ä\"","namespace":"org.iso.18013.5.1","retention":null,"typed":false},{"element":"plain_but_longer_than_eight","namespace":"org.iso.18013.5.1","retention":null,"typed":false}],"flow":"iso-device-response","reasons":[{"code":"event.unknown_tenant","detail":"tenant \"Zoë\\Co\"\u0001\u001f\#u{7F} is not configured\t\r\n\b\f/é🙂"}],"requestId":"\"id/with\\ëvery\u0000thing\u001f🙂 and a long plain tail of ASCII\"","status":null,"tenant":"tënant\n","verdict":"rejected","withheld":[]},"datacontenttype":"application/json","id":"19e2f129-f5ee-89a7-93a3-72da00b76266","source":"urn:x/\"y\"","specversion":"1.0","subject":"\"id/with\\ëvery\u0000thing\u001f🙂 and a long plain tail of ASCII\"","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#)
    }

    /// `data.ages` (answers as JSON booleans, null when unknown), an element
    /// the catalogue types, and the device-signed names listed apart. A
    /// result that is not accepted keeps the questions and loses the answers.
    @Test func agesTypedAndDeviceSignedElements() throws {
        var document = Self.document(elements: ["age_over_25", "x_custom"])
        document.elements[0].isTyped = true
        document.deviceSignedElements = [DisclosedElement(namespace: "org.iso.18013.5.1", identifier: "nickname")]
        var result = Self.result(id: "req-4", tenant: "acme", flow: .appleWalletApp, report: Self.allPassed, documents: [document])
        result.ageAnswers = [
            AgeAnswer(threshold: 21, value: .yes, namespace: Self.mDL, element: "age_over_25", isDerived: true),
            AgeAnswer(threshold: 30, value: .no, namespace: Self.mDL, element: "age_in_years", isDerived: true),
            AgeAnswer(threshold: 120, value: .unknown, namespace: nil, element: nil, isDerived: false),
        ]
        let golden = #"{"data":{"ages":[{"answer":true,"atLeast":21,"derived":true,"element":"age_over_25","namespace":"org.iso.18013.5.1"},{"answer":false,"atLeast":30,"derived":true,"element":"age_in_years","namespace":"org.iso.18013.5.1"},{"answer":null,"atLeast":120,"derived":false,"element":null,"namespace":null}],"checks":\#(Self.checks(passing: CheckName.order)),"deviceSignedElements":[{"element":"nickname","namespace":"org.iso.18013.5.1"}],"document":{"deviceAuthentication":null,"docType":"org.iso.18013.5.1.mDL","issuer":{"country":"US","subject":"CN=Test DS"},"mso":{"signed":"2022-03-31T00:05:00Z","validFrom":"2022-03-31T00:04:59.875Z","validUntil":"2023-04-01T00:05:00Z"},"status":null},"elements":[{"element":"age_over_25","namespace":"org.iso.18013.5.1","retention":null,"typed":true},{"element":"x_custom","namespace":"org.iso.18013.5.1","retention":null,"typed":false}],"flow":"apple-wallet-app","reasons":[],"requestId":"req-4","status":null,"tenant":"acme","verdict":"verified","withheld":[]},"datacontenttype":"application/json","id":"GOLDEN-ID","source":"urn:veridoc:verifier","specversion":"1.0","subject":"req-4","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#
            .replacingOccurrences(of: "GOLDEN-ID", with: OutcomeEvent.id(forRequest: "req-4"))
        let encoded = OutcomeEvent(result).encoded()
        #expect(encoded.json == golden)
        #expect(OutcomeEvent(result).jsonValue.jsonString() == golden)
        #expect(encoded.hasClaims, "age answers are stripped on erasure like sealed claims")

        var report = Self.allPassed
        report.fail(.msoDigests, .msoDigestMismatch, "a digest differs")
        var rejected = Self.result(id: "req-5", tenant: "acme", flow: .appleWalletApp, report: report, documents: [document])
        rejected.ageAnswers = result.ageAnswers
        let answers = try #require(OutcomeEvent(rejected).jsonValue["data"]?["ages"]?.arrayValue)
        #expect(answers.map { $0["answer"] } == [.null, .null, .null] && answers.map { $0["atLeast"] } == [21, 30, 120])
        #expect(answers.allSatisfy { $0["element"] == .null }, "a document that did not verify answers nothing")
    }

    /// The sealed claims are fresh each time (a new HPKE ephemeral key), so
    /// their two base64 values are pinned by shape and by opening them; every
    /// other byte is pinned exactly.
    @Test func withClaims() throws {
        let requested = [RequestedElement(namespace: Self.mDL, element: "family_name", retention: .mayStore(days: 7))]
        let result = Self.result(id: "req-3", tenant: "acme", flow: .appleWalletWeb, report: Self.allPassed,
                                 documents: [Self.document(elements: ["family_name"])], requested: requested)
        let recipient = try PrivateKey.generate(curve: .p256)
        let encoded = OutcomeEvent(result, claimsRecipient: recipient.publicKey).encoded()
        #expect(encoded.hasClaims)
        let pattern = #/"claims":\{"ciphertext":"([A-Za-z0-9+/=]+)","contentType":"application/cbor","enc":"([A-Za-z0-9+/=]+)","suite":"DHKEM-P256-HKDF-SHA256/HKDF-SHA256/AES-128-GCM"\}/#
        let match = try #require(encoded.json.firstMatch(of: pattern))
        let plaintext = try OutcomeClaims.open(["ciphertext": String(match.1), "enc": String(match.2)], requestID: "req-3", recipient: recipient)
        #expect(plaintext == OutcomeClaims.plaintext(of: result))
        let pinned = encoded.json.replacingCharacters(in: match.range, with: #""claims":SEALED"#)
        #expect(pinned == #"{"data":{"checks":\#(Self.checks(passing: CheckName.order)),"claims":SEALED,"document":{"deviceAuthentication":null,"docType":"org.iso.18013.5.1.mDL","issuer":{"country":"US","subject":"CN=Test DS"},"mso":{"signed":"2022-03-31T00:05:00Z","validFrom":"2022-03-31T00:04:59.875Z","validUntil":"2023-04-01T00:05:00Z"},"status":null},"elements":[{"element":"family_name","namespace":"org.iso.18013.5.1","retention":{"days":7,"intent":"mayStore"},"typed":false}],"flow":"apple-wallet-web","reasons":[],"requestId":"req-3","status":null,"tenant":"acme","verdict":"verified","withheld":[]},"datacontenttype":"application/json","id":"327927e2-278b-8578-8cb0-fdd42c5a54c6","source":"urn:veridoc:verifier","specversion":"1.0","subject":"req-3","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#)
    }

    /// Past `maxBytes` (thousands of elements here, with their names again in a
    /// digest-mismatch detail) the outcome is sent reduced: codes and checks
    /// exact, no elements or claims, details replaced; the document stays for a
    /// verified outcome only. The full outcome would never have been delivered.
    @Test func anOutcomePastTheSizeLimitIsReduced() throws {
        let names = (0..<4000).map { "element_\($0)_" + String(repeating: "x", count: 200) }
        var rejected = CheckReport()
        rejected.pass(.eventStructure)
        rejected.fail(.msoDigests, .msoDigestMismatch, "document 0: digest mismatch for " + names.joined(separator: ", "))
        let big = Self.result(id: "req-4", tenant: "acme", flow: .isoDeviceResponse, report: rejected, documents: [Self.document(elements: names)])
        #expect(OutcomeEvent(big).jsonValue.jsonString().utf8.count > OutcomeEvent.maxBytes)
        let encoded = OutcomeEvent(big).encoded()
        #expect(!encoded.hasClaims)
        #expect(encoded.json == #"{"data":{"checks":\#(Self.checks(passing: [.eventStructure], failing: [.msoDigests])),"document":null,"elements":[],"flow":"iso-device-response","reasons":[{"code":"mso.digest_mismatch","detail":"left out: the outcome exceeded 900000 bytes"}],"reduced":true,"requestId":"req-4","status":null,"tenant":"acme","verdict":"rejected","withheld":[]},"datacontenttype":"application/json","id":"OUTCOME-ID","source":"urn:veridoc:verifier","specversion":"1.0","subject":"req-4","time":"2022-04-01T00:05:00Z","type":"veridoc.verification.completed.v1"}"#
            .replacingOccurrences(of: "OUTCOME-ID", with: OutcomeEvent.id(forRequest: "req-4")))

        // Verified, with every element requested as mayStore and sealed: claims and elements go, the document stays.
        let requested = names.map { RequestedElement(namespace: Self.mDL, element: $0, retention: .mayStore(days: 7)) }
        let verified = Self.result(id: "req-5", tenant: "acme", flow: .appleWalletApp, report: Self.allPassed,
                                   documents: [Self.document(elements: names)], requested: requested)
        let recipient = try PrivateKey.generate(curve: .p256)
        let sealed = OutcomeEvent(verified, claimsRecipient: recipient.publicKey).encoded()
        #expect(!sealed.hasClaims && !sealed.json.contains("claims") && sealed.json.utf8.count < 4096)
        let data = try #require(try JSONParser().parse(sealed.json).objectValue?["data"]?.objectValue)
        #expect(data["reduced"] == .bool(true) && data["elements"] == .array([]) && data["verdict"] == .string("verified"))
        #expect(data["document"]?.objectValue?["docType"] == .string("org.iso.18013.5.1.mDL"))
    }
}
