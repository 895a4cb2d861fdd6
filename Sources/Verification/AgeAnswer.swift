import CBOR
import CivilDate
import Foundation
import MDoc

/// The answer to "is the holder at least `threshold` years old?" from what
/// one document returned (ISO 18013-5 §7.2.5; Apple's `age(atLeast:)`,
/// 1–125): from an `age_over_NN`, else `age_in_years`, else `birth_date` at
/// the verification time. It says which element answered and whether the
/// answer is derived (anything but `age_over_` of exactly the threshold).
public struct AgeAnswer: Sendable, Equatable {
    public enum Value: String, Sendable {
        case yes = "true"
        case no = "false"
        case unknown
    }

    public let threshold: Int
    public let value: Value
    /// The element that answered and its namespace; nil when nothing did.
    public let namespace: String?
    public let element: String?
    public let isDerived: Bool

    public init(threshold: Int, value: Value, namespace: String?, element: String?, isDerived: Bool) {
        self.threshold = threshold
        self.value = value
        self.namespace = namespace
        self.element = element
        self.isDerived = isDerived
    }

    /// The answer from the issuer-signed elements of a response of one
    /// document; unknown for a response of several, since nothing ties the
    /// age in one document to the person another describes (a portrait from
    /// the holder's, an age from a friend's). Device-signed elements never
    /// answer: the issuer did not vouch for them.
    public static func evaluate(atLeast threshold: Int, documents: [DocumentSummary], at time: Date) -> AgeAnswer {
        guard documents.count == 1, let document = documents.first else {
            return AgeAnswer(threshold: threshold, value: .unknown, namespace: nil, element: nil, isDerived: false)
        }
        let elements = document.elements.compactMap { element in
            element.value.map { (namespace: element.namespace, identifier: element.identifier, value: $0) }
        }
        return evaluate(atLeast: threshold, elements: elements, at: time)
    }

    /// Thresholds Apple's `age(atLeast:)` accepts.
    public static let thresholds = 1...125

    /// The answer from `elements` (namespace, identifier, value) of one
    /// document, at `time`. `age_over_NN` answers first, as the issuer
    /// stated it: a true one at or above the threshold says yes, a false one
    /// at or below says no (ISO's nearest true above, nearest false below).
    /// Statements that contradict each other anywhere (a true `age_over_25`
    /// beside a false `age_over_23`) answer unknown, with no fallback: a
    /// document that says both is not one to take an age from. Then
    /// `age_in_years`; then `birth_date` (full-date, or ISO 23220's map with
    /// no digit marked approximate).
    public static func evaluate(atLeast threshold: Int, elements: [(namespace: String, identifier: String, value: CBORItem)], at time: Date) -> AgeAnswer {
        var yes: (age: Int, element: (String, String))?
        var no: (age: Int, element: (String, String))?
        var oldestTrue = Int.min, youngestFalse = Int.max
        for element in elements {
            guard let age = overAge(element.identifier), let stated = element.value.bool else { continue }
            if stated { oldestTrue = max(oldestTrue, age) } else { youngestFalse = min(youngestFalse, age) }
            let name = (element.namespace, element.identifier)
            if stated, age >= threshold, yes.map({ age < $0.age }) ?? true { yes = (age, name) }
            if !stated, age <= threshold, no.map({ age > $0.age }) ?? true { no = (age, name) }
        }
        // Over NN implies over every younger age; not over MM, not over any older one.
        if youngestFalse <= oldestTrue { return AgeAnswer(threshold: threshold, value: .unknown, namespace: nil, element: nil, isDerived: true) }
        switch (yes, no) {
        case (.some, .some):
            return AgeAnswer(threshold: threshold, value: .unknown, namespace: nil, element: nil, isDerived: true)
        case (.some(let found), nil):
            return AgeAnswer(threshold: threshold, value: .yes, namespace: found.element.0, element: found.element.1, isDerived: found.age != threshold)
        case (nil, .some(let found)):
            return AgeAnswer(threshold: threshold, value: .no, namespace: found.element.0, element: found.element.1, isDerived: found.age != threshold)
        case (nil, nil):
            break
        }
        if let years = elements.first(where: { $0.identifier.hasSameUTF8(as: "age_in_years") }), let age = years.value.unsigned {
            return AgeAnswer(threshold: threshold, value: age >= UInt64(threshold) ? .yes : .no, namespace: years.namespace, element: years.identifier, isDerived: true)
        }
        if let birth = elements.first(where: { $0.identifier.hasSameUTF8(as: "birth_date") }), let born = birthDate(birth.value) {
            let value: Value = hasReached(age: threshold, born: born, on: time) ? .yes : .no
            return AgeAnswer(threshold: threshold, value: value, namespace: birth.namespace, element: birth.identifier, isDerived: true)
        }
        return AgeAnswer(threshold: threshold, value: .unknown, namespace: nil, element: nil, isDerived: false)
    }

    /// The kind of element that answered: `age_over` (the issuer's statement
    /// of exactly the age asked), `age_over_other`, `age_in_years`,
    /// `birth_date` or `unknown`. For counters only, never per result: for an
    /// issuer that states a fixed set of ages, which kind answered can tell
    /// the answer (asked 25 of a document stating 18, 21 and 65, an answer
    /// from `age_in_years` means 21 to 64).
    public var source: String {
        switch (value, element) {
        case (.unknown, _), (_, nil): "unknown"
        case (_, let element?) where AgeAnswer.overAge(element) != nil: isDerived ? "age_over_other" : "age_over"
        case (_, let element?): element
        }
    }

    /// Whether an element of this name can answer an age: `age_over_NN`, `age_in_years`, `birth_date`.
    static func mayAnswer(_ identifier: String) -> Bool {
        overAge(identifier) != nil || identifier.hasSameUTF8(as: "age_in_years") || identifier.hasSameUTF8(as: "birth_date")
    }

    /// NN of `age_over_NN` (two digits); nil for any other identifier.
    static func overAge(_ identifier: String) -> Int? {
        let bytes = Array(identifier.utf8)
        guard bytes.count == 11, bytes.starts(with: Array("age_over_".utf8)) else { return nil }
        let digits = bytes[9...]
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// The civil date of a `full-date` (tag 1004), or of ISO 23220's
    /// `{birth_date: full-date, ? approximate_mask: tstr}` map; nil when the
    /// mask marks any digit approximate (an issuer's placeholder such as
    /// 1 January for an unknown day would otherwise answer yes months early).
    static func birthDate(_ item: CBORItem) -> (year: Int64, month: Int64, day: Int64)? {
        if let mask = item["approximate_mask"] {
            guard let text = mask.text, text.utf8.allSatisfy({ $0 == UInt8(ascii: "0") }) else { return nil }
        }
        let dated = item.tagged ?? item["birth_date"]?.tagged
        guard let tagged = dated, tagged.tag == 1004, let text = tagged.item.text, let date = RFC3339.fullDate(from: text) else { return nil }
        return CivilDate.civil(fromDays: CivilDate.floorDiv(Int64(date.timeIntervalSince1970), 86_400))
    }

    /// The offset of the last time zone to reach a date (UTC−12): the holder's
    /// own zone is not known, and on the earliest date anywhere on Earth at
    /// `time` the birthday has been reached wherever the holder stands.
    static let latestZoneOffset: Int64 = -12 * 3_600

    /// Whether someone born on `born` is `age` years old at `time` wherever
    /// they are: on the calendar date at UTC−12, so a birthday answers yes
    /// from noon UTC of that day (a bar east of UTC−12 hears no for up to a
    /// day more, never yes early). A 29 February birthday is reached on
    /// 1 March in a common year, whatever a jurisdiction's rule.
    static func hasReached(age: Int, born: (year: Int64, month: Int64, day: Int64), on time: Date) -> Bool {
        let seconds = Int64(time.timeIntervalSince1970.rounded(.down)) + latestZoneOffset
        let today = CivilDate.civil(fromDays: CivilDate.floorDiv(seconds, 86_400))
        let year = born.year + Int64(age)
        // The birthday in `year`: the same month and day, or 1 March for a 29 February in a common year.
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let birthday = born.month == 2 && born.day == 29 && !isLeap ? (year, Int64(3), Int64(1)) : (year, born.month, born.day)
        return (today.year, today.month, today.day) >= birthday
    }
}
