import CBOR
import Foundation
import MDoc
import Testing
@testable import Verification

/// `age(atLeast:)` answered from what one document returned: the issuer's
/// `age_over_NN` first (nearest true above, nearest false below), then
/// `age_in_years`, then `birth_date` at the verification time.
struct AgeAnswerTests {
    static let mdl = "org.iso.18013.5.1"

    static func item(_ value: CBOR) throws -> CBORItem { try CBORDecoder().decode(value.encoded()) }

    static func answer(_ threshold: Int, _ elements: [(String, CBOR)], at time: String = "2026-06-15T12:00:00Z") throws -> AgeAnswer {
        let items = try elements.map { (namespace: mdl, identifier: $0.0, value: try item($0.1)) }
        return AgeAnswer.evaluate(atLeast: threshold, elements: items, at: try #require(RFC3339.date(from: time)))
    }

    @Test func theIssuersStatementAnswersFirst() throws {
        let exact = try Self.answer(21, [("age_over_21", true), ("age_in_years", 19)])
        #expect(exact.threshold == 21 && exact.value == .yes && exact.element == "age_over_21" && exact.namespace == Self.mdl && !exact.isDerived,
                "the issuer's statement wins over the other elements")
        #expect(try Self.answer(21, [("age_over_21", false)]).value == .no)
        // Nearest true above: over 25 is over 21 (derived); nearest false below: not over 18 is not over 21.
        let above = try Self.answer(21, [("age_over_18", true), ("age_over_25", true), ("age_over_65", true)])
        #expect(above.value == .yes && above.element == "age_over_25" && above.namespace == Self.mdl && above.isDerived)
        let below = try Self.answer(21, [("age_over_18", false), ("age_over_16", false)])
        #expect(below.value == .no && below.element == "age_over_18" && below.namespace == Self.mdl && below.isDerived)
        // Statements that say nothing of the threshold, and ones that contradict each other
        // anywhere, even away from the threshold, with no fallback to the other elements.
        #expect(try Self.answer(21, [("age_over_18", true), ("age_over_25", false)]).value == .unknown)
        #expect(try Self.answer(20, [("age_over_21", true), ("age_over_18", false)]).value == .unknown)
        let contradictory = try Self.answer(21, [("age_over_25", true), ("age_over_23", false), ("age_in_years", 30)])
        #expect(contradictory.value == .unknown && contradictory.element == nil, "not over 23 yet over 25: nothing answers")
        // Not a boolean, or not two digits: not a statement.
        #expect(try Self.answer(21, [("age_over_21", "true"), ("age_over_210", true)]).value == .unknown)
    }

    @Test func ageInYearsAnswersNext() throws {
        let years = try Self.answer(21, [("age_in_years", 21)])
        #expect(years.value == .yes && years.element == "age_in_years" && years.namespace == Self.mdl && years.isDerived)
        #expect(try Self.answer(21, [("age_in_years", 20), ("birth_date", .tagged(1004, "1990-01-01"))]).value == .no, "age_in_years before birth_date")
    }

    @Test(arguments: [
        // The day before the 21st birthday, and on it: the birthday counts once it
        // has begun everywhere, at noon UTC (midnight at UTC−12), never earlier.
        ("2005-06-16", "2026-06-16T11:59:59Z", AgeAnswer.Value.no), ("2005-06-15", "2026-06-15T12:00:00Z", .yes),
        ("2005-06-15", "2026-06-15T11:59:59Z", .no), ("2005-06-15", "2026-06-14T23:00:00Z", .no),
        // Born on 29 February: in a common year the birthday is 1 March, never 28 February.
        ("2004-02-29", "2025-03-01T11:59:59Z", .no), ("2004-02-29", "2025-03-01T12:00:00Z", .yes),
        // …and on 29 February itself in a leap year.
        ("2003-02-29", "2024-02-28T12:00:00Z", .unknown),
        ("2000-02-29", "2021-02-28T23:59:59Z", .no), ("2000-02-29", "2020-02-29T12:00:00Z", .no),
        ("2003-02-28", "2024-02-28T12:00:00Z", .yes), ("1999-02-28", "2020-02-29T12:00:00Z", .yes),
    ])
    func birthDateAnswersLast(_ born: String, _ at: String, _ expected: AgeAnswer.Value) throws {
        // 2003-02-29 does not exist: a date that is not a date answers nothing.
        let answer = try Self.answer(21, [("birth_date", .tagged(1004, .text(born)))], at: at)
        #expect(answer.value == expected, "born \(born), at \(at)")
        if expected != .unknown { #expect(answer.element == "birth_date" && answer.namespace == Self.mdl && answer.isDerived) }
    }

    /// Two documents: nothing ties the age in one to the person the other
    /// describes, so neither answers, whichever holds the age.
    @Test func onlyAResponseOfOneDocumentAnswers() throws {
        func document(_ elements: [(String, CBOR)]) throws -> DocumentSummary {
            DocumentSummary(docType: "org.iso.18013.5.1.mDL", issuerSubject: nil, issuerCountry: nil, signed: nil, validFrom: nil, validUntil: nil,
                            elements: try elements.map { DisclosedElement(namespace: Self.mdl, identifier: $0.0, value: try Self.item($0.1)) })
        }
        let now = try #require(RFC3339.date(from: "2026-06-15T12:00:00Z"))
        let aged = try document([("age_over_21", true)])
        let portrait = try document([("portrait", .bytes([0xFF, 0xD8]))])
        #expect(AgeAnswer.evaluate(atLeast: 21, documents: [aged], at: now).value == .yes)
        #expect(AgeAnswer.evaluate(atLeast: 21, documents: [portrait, aged], at: now).value == .unknown)
        #expect(AgeAnswer.evaluate(atLeast: 21, documents: [aged, aged], at: now).value == .unknown)
        #expect(AgeAnswer.evaluate(atLeast: 21, documents: [], at: now).value == .unknown)
    }

    @Test func theISO23220BirthDateMapAnswersToo() throws {
        let map: CBOR = ["birth_date": .tagged(1004, "2000-01-01"), "approximate_mask": "00000000"]
        #expect(try Self.answer(18, [("birth_date", map)]).value == .yes)
        // A day or month marked approximate (an issuer's placeholder) answers nothing.
        for mask in ["00000011", "00001100", "10000000"] {
            let approximate: CBOR = ["birth_date": .tagged(1004, "2000-01-01"), "approximate_mask": .text(mask)]
            #expect(try Self.answer(18, [("birth_date", approximate)]).value == .unknown, "\(mask)")
        }
        let notText: CBOR = ["birth_date": .tagged(1004, "2000-01-01"), "approximate_mask": 0]
        #expect(try Self.answer(18, [("birth_date", notText)]).value == .unknown)
        #expect(try Self.answer(18, [("birth_date", .text("2000-01-01"))]).value == .unknown, "an untagged text is not a full-date")
        #expect(try Self.answer(18, []).value == .unknown)
    }
}
