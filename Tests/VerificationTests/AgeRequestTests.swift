import CBOR
import Foundation
import JSON
import MDoc
import Testing
import TestIssuer
import Verification

/// `age(atLeast:)` through the verifier: a request's `ageAtLeast`, answered
/// from what the test issuer's document returned, in the outcome as a plain
/// boolean; and the requests the seeds say to refuse.
@Suite struct AgeRequestTests {
    static let now = JurisdictionTests.now
    static let mdl = TestIssuer.Credential.mDLNameSpace
    static let ageElements = ["age_in_years", "age_over_18", "age_over_21", "age_over_65", "birth_date"]

    /// The holder's mDL with its age elements replaced by `ages`, asked `age(atLeast:)` for each of `asked`.
    static func verify(asking asked: [Int], returning ages: [String: CBOR], requested: [RequestedElement] = [],
                       edit: (inout TestIssuer.Credential) -> Void = { _ in }, deviceSigned: [(String, String, CBOR)] = []) throws -> VerificationResult {
        var factory = try JurisdictionTests.factory(authority: try TestIssuer.Authority(now: now), edit: { credential in
            for name in ageElements { credential[mdl, name] = nil }
            for (name, value) in ages { credential[mdl, name] = value }
            edit(&credential)
        }, seed: 61)
        factory.holder.deviceSignedElements = deviceSigned.map { (namespace: $0.0, identifier: $0.1, value: $0.2) }
        var options = TestIssuer.EventOptions()
        options.ageRequests = asked.map { AgeRequest(age: $0, retention: .willNotStore) }
        options.requestedElements = requested
        let event = try factory.event(.isoDeviceResponse, options: options)
        return try factory.merchant.verifier(trusting: [factory.authority.iaca]).verify(eventJSON: event.json(), at: now)
    }

    /// The outcome's `data.ages`, as an integrator reads it.
    static func ages(_ result: VerificationResult) throws -> [JSONValue] {
        try #require(OutcomeEvent(result).jsonValue["data"]?["ages"]?.arrayValue)
    }

    static func birthDate(yearsAgo years: Int, plusDays days: Int) -> CBOR {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = calendar.date(byAdding: DateComponents(year: -years, day: days), to: now)!
        return TestIssuer.Credential.fullDate(date)
    }

    @Test func theIssuersAgeOverAnswersPlainly() throws {
        let result = try Self.verify(asking: [21], returning: ["age_over_21": true, "age_in_years": 19])
        #expect(result.verdict == "verified", "\(result.report.reasons.map(\.detail))")
        #expect(try Self.ages(result) == [["answer": true, "atLeast": 21, "derived": false, "element": "age_over_21", "namespace": .string(Self.mdl)]])
        let no = try Self.verify(asking: [21], returning: ["age_over_21": false])
        #expect(try Self.ages(no).first?["answer"] == .bool(false))
    }

    @Test func ageInYearsAnswersWhenNoAgeOverCameBack() throws {
        let result = try Self.verify(asking: [21, 40], returning: ["age_in_years": 34])
        let answers = try Self.ages(result)
        #expect(answers.map { $0["answer"] } == [.bool(true), .bool(false)])
        #expect(answers.allSatisfy { $0["element"] == "age_in_years" && $0["derived"] == .bool(true) })
    }

    @Test(arguments: [(-1, false), (0, true), (1, true)])
    func birthDateAnswersOnTheBirthdayNotTheDayBefore(_ offsetDays: Int, _ expected: Bool) throws {
        // Born 21 years ago, `offsetDays` before today: -1 is a birthday tomorrow.
        let result = try Self.verify(asking: [21], returning: ["birth_date": Self.birthDate(yearsAgo: 21, plusDays: -offsetDays)])
        let answer = try #require(try Self.ages(result).first)
        #expect(answer["answer"] == .bool(expected) && answer["element"] == "birth_date" && answer["derived"] == .bool(true))
    }

    @Test func nothingThatAnswersIsUnknownNotFalse() throws {
        let result = try Self.verify(asking: [21, 125], returning: [:])
        #expect(result.verdict == "verified")
        let answers = try Self.ages(result)
        #expect(answers.map { $0["answer"] } == [.null, .null] && answers.map { $0["atLeast"] } == [21, 125])
    }

    /// A value the issuer did not sign for the device answers nothing, and
    /// is listed apart from the issuer-signed elements.
    @Test func deviceSignedElementsNeverAnswer() throws {
        let result = try Self.verify(asking: [21], returning: [:], requested: [RequestedElement(namespace: Self.mdl, element: "age_over_21", retention: .willNotStore)],
                                     deviceSigned: [(Self.mdl, "age_over_21", true)])
        #expect(result.verdict == "verified", "\(result.report.reasons.map(\.detail))")
        let data = try #require(OutcomeEvent(result).jsonValue["data"])
        #expect(data["ages"]?.arrayValue?.first?["answer"] == .null)
        #expect(data["deviceSignedElements"] == [["element": "age_over_21", "namespace": .string(Self.mdl)]])
        #expect(data["withheld"] == [["element": "age_over_21", "namespace": .string(Self.mdl)]],
                "a device-signed element does not satisfy a request for the issuer's")
        #expect(OutcomeClaims.plaintext(of: result) == nil, "no device-signed value is delivered")
    }

    @Test func aDocumentThatDidNotVerifyAnswersNothing() throws {
        let result = try Self.verify(asking: [21], returning: ["age_over_21": true], edit: { $0[Self.mdl, "birth_date"] = .text("1990-01-01") })
        #expect(result.verdict == "rejected")
        #expect(try Self.ages(result).first?["answer"] == .null)
    }

    @Test(arguments: [
        (#"[{"age":0,"retention":{"intent":"willNotStore"}}]"#, "data.ageAtLeast[0].age must be a whole number from 1 to 125"),
        (#"[{"age":126,"retention":{"intent":"willNotStore"}}]"#, "data.ageAtLeast[0].age must be a whole number from 1 to 125"),
        (#"[{"age":21,"retention":{"intent":"willNotStore"}},{"age":21,"retention":{"intent":"mayStore"}}]"#, "data.ageAtLeast[1].age must be an age not already asked"),
        (#"[{"age":21}]"#, "data.ageAtLeast[0] is an object of age (a whole number) and retention"),
        (#"[{"age":"21","retention":{"intent":"willNotStore"}}]"#, "data.ageAtLeast[0] is an object of age (a whole number) and retention"),
        (#"[]"#, "data.ageAtLeast is not an array of 1 to 8 ages"),
        (#"{"age":21}"#, "data.ageAtLeast is not an array of 1 to 8 ages"),
    ])
    func malformedAgeRequestsAreRefusedNamingTheField(_ ageAtLeast: String, _ detail: String) throws {
        let event = #"{"specversion":"1.0","id":"a","source":"s","type":"veridoc.verification.requested.v1","time":"2025-06-15T15:06:40Z","datacontenttype":"application/json","data":{"tenant":"t","flow":"iso-device-response","payload":"AA==","sessionTranscript":"AA==","ageAtLeast":\#(ageAtLeast)}}"#
        guard case .failure(let rejection) = EventParser().parse(json: Array(event.utf8)) else {
            Issue.record("accepted \(ageAtLeast)")
            return
        }
        #expect(rejection.detail == detail)
    }

    /// Apple: "An app can't include both an age(atLeast:) element and an age element in the same request."
    @Test func anAgeCheckWithTheAgeElementIsRefused() throws {
        let result = try Self.verify(asking: [21], returning: ["age_over_21": true],
                                     requested: [RequestedElement(namespace: Self.mdl, element: "age_in_years", retention: .willNotStore)])
        #expect(result.codes == [.eventInvalid] && result.verdict == "rejected")
        #expect(result.report.reasons.first?.detail.contains("requestedElements[0] must be not age_in_years") == true, "\(result.report.reasons)")
        // Other elements, age_over_NN among them, may go with an age check.
        let fine = try Self.verify(asking: [21], returning: ["age_over_21": true],
                                   requested: [RequestedElement(namespace: Self.mdl, element: "age_over_18", retention: .willNotStore)])
        #expect(fine.verdict == "verified")
        // The request's element list names age_over_18 only: age_over_21 answers the
        // check all the same, and is not listed (data minimisation keeps the boolean).
        #expect(try Self.ages(fine).first?["element"] == "age_over_21")
        #expect(fine.documents.first?.elements.map(\.identifier) == [], "the wallet returned no age_over_18, and nothing else is listed")
    }

    @Test func aWalletIsAskedTheElementApplesMappingNames() {
        let request = { (age: Int, docType: String) in AgeRequest(age: age, retention: .willNotStore).requestedElement(docType: docType) }
        #expect(request(21, "org.iso.18013.5.1.mDL") == RequestedElement(namespace: Self.mdl, element: "age_over_21", retention: .willNotStore))
        #expect(request(5, "org.iso.18013.5.1.mDL").element == "age_over_05")
        #expect(request(100, "org.iso.18013.5.1.mDL").element == "age_in_years")
        #expect(request(18, "org.iso.23220.photoid.1").namespace == "org.iso.23220.1")
        #expect(request(18, "eu.europa.ec.av.1").namespace == "eu.europa.ec.av.1")
        #expect(request(18, "com.example.unknown").namespace == Self.mdl)
    }
}

extension AgeRequestTests {
    /// A birth date answers at the request's time when that is earlier than
    /// the verification: a backlog that carries an event past a birthday
    /// never turns its no into a yes.
    @Test func aBirthDateAnswersAtTheRequestsTimeNotLater() throws {
        // Noon UTC is midnight at UTC−12, where a date begins last: the event
        // was made the day before the 21st birthday there, verified on it.
        let verifiedAt = try #require(RFC3339.date(from: "2025-06-15T12:00:02Z"))
        var random = TestIssuer.SeededRandom(seed: 62)
        var credential = TestIssuer.Credential.mobileDrivingLicence(now: verifiedAt, using: &random)
        for name in Self.ageElements { credential[Self.mdl, name] = nil }
        credential[Self.mdl, "birth_date"] = .tagged(1004, "2004-06-15")
        var factory = TestIssuer.EventFactory(authority: try TestIssuer.Authority(now: verifiedAt), merchant: try TestIssuer.Merchant(),
                                              holder: try TestIssuer.Holder(), credential: credential, now: verifiedAt, seed: 62)
        var options = TestIssuer.EventOptions()
        options.ageRequests = [AgeRequest(age: 21, retention: .willNotStore)]
        options.time = verifiedAt - 5
        let event = try factory.event(.isoDeviceResponse, options: options)
        let verifier = try factory.merchant.verifier(trusting: [factory.authority.iaca])
        let result = verifier.verify(eventJSON: event.json(), at: verifiedAt)
        #expect(result.verdict == "verified", "\(result.report.reasons.map(\.detail))")
        #expect(try Self.ages(result).first?["answer"] == .bool(false))
        // Made after noon, the same answer is yes.
        options.time = verifiedAt
        let later = try factory.event(.isoDeviceResponse, options: options)
        #expect(try Self.ages(verifier.verify(eventJSON: later.json(), at: verifiedAt + 1)).first?["answer"] == .bool(true))
    }
}
