import Foundation
import Testing
import TestSupport
@testable import JSON

/// Generated documents through Foundation's JSONSerialization and through the
/// JSON module: both parsers must read the same values, and what the writer
/// produces must read back (in Foundation too) as the same document.
@Suite struct FoundationDifferentialTests {
    /// A small deterministic generator (SplitMix64), so a failure reproduces.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    static let alphabet: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "\u{7F}", "é", "€", "😀", "\u{2028}", "\u{212A}", "e\u{301}", "ß", "中"]

    static func string(_ random: inout Generator) -> String {
        (0..<random.below(12)).map { _ in alphabet[random.below(alphabet.count)] }.joined()
    }

    static func number(_ random: inout Generator) -> JSONValue {
        switch random.below(5) {
        case 0: return .integer(random.below(2001) - 1000)
        case 1: return .number(JSONNumber(Int64(bitPattern: random.next()) >> random.below(64)))
        case 2: return .number(JSONNumber(Double(random.below(1_000_000)) / 64)!)
        case 3: return .number(JSONNumber(Double(Int64(bitPattern: random.next())) * pow(10, Double(random.below(40) - 20)))!)
        default: return .number(JSONNumber(Double(random.below(100)) / 10)!)
        }
    }

    static func value(_ random: inout Generator, depth: Int) -> JSONValue {
        switch random.below(depth > 4 ? 5 : 8) {
        case 0: return .null
        case 1: return .bool(random.below(2) == 0)
        case 2, 3: return number(&random)
        case 4: return .string(string(&random))
        case 5: return .array((0..<random.below(6)).map { _ in value(&random, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<random.below(7) { object[string(&random)] = value(&random, depth: depth + 1) }
            return .object(object)
        }
    }

    /// Whether Foundation's value is the same as ours (numbers by `Double`, integers exactly).
    static func matches(_ ours: JSONValue, _ theirs: Any) -> Bool { mismatch(ours, theirs) == nil }

    /// Where Foundation's value differs from ours, if it does.
    static func mismatch(_ ours: JSONValue, _ theirs: Any, at path: String = "$") -> String? {
        let isBool = { (value: Any) in (value as? NSNumber).map { ["c", "B"].contains(String(cString: $0.objCType)) } ?? false }
        switch ours {
        case .null: return theirs is NSNull ? nil : path
        case .bool(let flag):
            guard isBool(theirs), let number = theirs as? NSNumber else { return path }
            return number.boolValue == flag ? nil : path
        case .number(let number):
            guard !isBool(theirs), let other = theirs as? NSNumber else { return path }
            if let integer = number.integer, integer.magnitude < 1 << 53 {
                return other.doubleValue == Double(integer) ? nil : "\(path): \(number) vs \(other)"
            }
            // Foundation's own decimal conversion is sometimes a few ulps off (seen: 3)
            // (ours is correctly rounded, see `numbersAreCorrectlyRounded`).
            return abs(other.doubleValue - number.double) <= 8 * number.double.ulp ? nil : "\(path): \(number) vs \(other)"
        case .string(let text):
            guard let other = theirs as? String else { return path }
            return Array(other.utf8) == Array(text.utf8) ? nil : path
        case .array(let elements):
            guard let other = theirs as? [Any], other.count == elements.count else { return path }
            for (index, (element, their)) in zip(elements, other).enumerated() {
                if let found = mismatch(element, their, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let object):
            guard let other = theirs as? [String: Any], other.count == object.count else { return path }
            // Foundation's dictionary merges canonically equivalent keys; compare by its keys' bytes.
            var byBytes: [[UInt8]: Any] = [:]
            for (key, value) in other { byBytes[Array(key.utf8)] = value }
            guard byBytes.count == object.count else { return path }
            for member in object.members {
                guard let their = byBytes[Array(member.key.utf8)] else { return "\(path): key missing" }
                if let found = mismatch(member.value, their, at: "\(path).\(member.key.debugDescription)") { return found }
            }
            return nil
        }
    }

    /// Whether Foundation can hold the document without merging keys (its
    /// dictionaries treat canonically equivalent keys as one).
    static func foundationRepresentable(_ value: JSONValue) -> Bool {
        switch value {
        case .array(let elements): return elements.allSatisfy(foundationRepresentable)
        case .object(let object):
            return Set(object.keys).count == object.count && object.members.allSatisfy { foundationRepresentable($0.value) }
        default: return true
        }
    }

    @Test func bothParsersReadGeneratedDocumentsAlike() throws {
        var random = Generator(state: 20_260_101)
        var compared = 0
        for round in 0..<400 {
            let document = Self.value(&random, depth: 0)
            guard Self.foundationRepresentable(document) else { continue }
            for order in [JSONWriter.KeyOrder.sorted, .insertion] {
                let ours = document.jsonBytes(keyOrder: order)
                let parsed = try JSONParser().parse(ours)
                #expect(parsed == document, "round \(round): parse(write(x)) == x")
                let foundation = try JSONSerialization.jsonObject(with: Data(ours), options: [.fragmentsAllowed])
                #expect(Self.mismatch(parsed, foundation) == nil, "round \(round): Foundation reads our output alike")
            }
            // And Foundation's own output, pretty-printed (whitespace, escaped slashes), reads the same here.
            let theirsText = try JSONSerialization.data(withJSONObject: foundationObject(document), options: [.fragmentsAllowed, .prettyPrinted])
            let theirs = try JSONParser().parse(Array(theirsText))
            #expect(Self.matches(theirs, try JSONSerialization.jsonObject(with: theirsText, options: [.fragmentsAllowed])), "round \(round)")
            #expect(theirs == document || Self.numbersOnlyDiffer(theirs, document), "round \(round): Foundation's text parses to the same value")
            compared += 1
        }
        #expect(compared > 300)
    }

    /// Foundation writes some doubles with fewer digits than round-trip needs;
    /// apart from that the documents must agree.
    static func numbersOnlyDiffer(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return abs(x.double - y.double) <= abs(y.double) * 1e-15
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { numbersOnlyDiffer($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.members.allSatisfy { member in y[member.key].map { numbersOnlyDiffer(member.value, $0) } ?? false }
        default: return a == b
        }
    }

    @Test func numbersAreCorrectlyRounded() throws {
        var random = Generator(state: 7)
        for _ in 0..<2_000 {
            let double = Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)
            let text = "\(double)"
            #expect(try JSONParser().parse(text).numberValue?.double == double, "\(text)")
        }
        #expect(try JSONParser().parse("1796528.7801793066").numberValue?.double == 1796528.7801793066)
    }

    @Test func foundationAcceptsWhatWeAcceptOnHandWrittenEdgeCases() throws {
        let accepted = [
            #"{"a":[1,-0,0.5,1e2,1E-2,-1.5e+3],"b":"\u00e9\ud83d\ude00\/\b\f\n\r\t","c":null,"d":true}"#,
            " [ ] ", "\"\"", "0", #"{"":""}"#, "[[[[[[[[[[]]]]]]]]]]",
        ]
        for text in accepted {
            let ours = try JSONParser().parse(Array(text.utf8))
            let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
            #expect(Self.matches(ours, theirs), "\(text)")
        }
    }
}
