import Testing
@testable import JSON

private func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
    try JSONParser(maxDepth: maxDepth).parse(Array(text.utf8))
}

private func reason(_ bytes: [UInt8], maxDepth: Int = 64) -> JSONParseError.Reason? {
    do throws(JSONParseError) {
        _ = try JSONParser(maxDepth: maxDepth).parse(bytes)
        return nil
    } catch {
        return error.reason
    }
}

private func reason(_ text: String, maxDepth: Int = 64) -> JSONParseError.Reason? {
    reason(Array(text.utf8), maxDepth: maxDepth)
}

@Suite struct JSONParserTests {
    @Test func scalarsAtTheTopLevel() throws {
        #expect(try parse("null") == .null)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse(" \t\r\n 42 \n") == 42)
        #expect(try parse("\"\"") == "")
        #expect(try parse("[]") == [])
        #expect(try parse("{}") == .object(JSONObject()))
    }

    @Test func objectsKeepMemberOrderAndLookUpByKey() throws {
        let value = try parse(#"{"b": 1, "a": [true, null, "x"], "c": {"d": -2.5}}"#)
        let object = try #require(value.objectValue)
        #expect(object.keys == ["b", "a", "c"])
        #expect(value["a"] == [true, .null, "x"])
        #expect(value["c"]?["d"]?.numberValue?.double == -2.5)
        #expect(value["missing"] == nil)
        #expect(JSONValue.string("x")["a"] == nil, "only objects have members")
    }

    @Test func largeObjectsLookUpThroughTheIndex() throws {
        let members = (0..<200).map { "\"k\($0)\": \($0)" }.joined(separator: ",")
        let value = try parse("{\(members)}")
        for key in [0, 11, 12, 13, 199] { #expect(value["k\(key)"]?.integerValue == Int64(key)) }
        #expect(value["k200"] == nil)
        let duplicate = (0..<200).map { "\"k\($0)\": 0" }.joined(separator: ",") + ",\"k150\": 1"
        #expect(reason("{\(duplicate)}") == .duplicateKey)
    }

    @Test func keysCompareByBytesNotByCanonicalEquivalence() throws {
        // U+212A KELVIN SIGN is canonically equivalent to "K": distinct JSON keys all the same.
        let value = try parse("{\"K\": 1, \"\u{212A}\": 2, \"e\u{301}\": 3, \"\u{E9}\": 4}")
        #expect(value["K"]?.integerValue == 1)
        #expect(value["\u{212A}"]?.integerValue == 2)
        #expect(value["e\u{301}"]?.integerValue == 3)
        #expect(value["\u{E9}"]?.integerValue == 4)
        #expect(JSONValue.string("\u{E9}") != JSONValue.string("e\u{301}"))
    }

    @Test func numbersFollowTheGrammar() throws {
        let accepted: [(String, Double, Int64?)] = [
            ("0", 0, 0), ("-0", -0.0, 0), ("7", 7, 7), ("-12", -12, -12), ("2.5", 2.5, nil), ("2.0", 2, 2),
            ("1e2", 100, 100), ("1E+2", 100, 100), ("100e-2", 1, 1), ("1e-2", 0.01, nil), ("0.000", 0, 0),
            ("-0.0e5", -0.0, 0), ("12.340e1", 123.4, nil), ("1.5e1", 15, 15),
            ("9223372036854775807", 9.223372036854775808e18, .max), ("-9223372036854775808", -9223372036854775808, .min),
            ("9223372036854775808", 9223372036854775808, nil), ("9007199254740993", 9007199254740992, 9007199254740993),
            ("123456789012345678", 123456789012345680, 123456789012345678), ("1e-400", 0, nil), ("1.7976931348623157e308", .greatestFiniteMagnitude, nil),
        ]
        for (text, double, integer) in accepted {
            let number = try #require(try parse(text).numberValue, "\(text)")
            #expect(number.double == double, "\(text)")
            #expect(number.double.sign == double.sign, "\(text) sign")
            #expect(number.integer == integer, "\(text)")
        }
        let rejected: [(String, JSONParseError.Reason)] = [
            ("01", .leadingZero), ("-01", .leadingZero), ("00", .leadingZero), ("1.", .invalidNumber), (".5", .unexpectedByte),
            ("-", .invalidNumber), ("-a", .invalidNumber), ("1e", .invalidNumber), ("1e+", .invalidNumber), ("+1", .unexpectedByte),
            ("NaN", .unexpectedByte), ("Infinity", .unexpectedByte), ("-Infinity", .invalidNumber), ("1e400", .numberOutOfRange),
            ("-1e999999999999", .numberOutOfRange), ("0x10", .trailingData), ("1.5.", .trailingData), ("1 2", .trailingData),
        ]
        for (text, expected) in rejected { #expect(reason(text) == expected, "\(text)") }
    }

    @Test func booleansAreNotNumbers() throws {
        #expect(try parse("true").integerValue == nil)
        #expect(try parse("1").boolValue == nil)
        #expect(try parse("true") != parse("1"))
    }

    @Test func stringEscapes() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u20AC\u0000""#) == .string("Aé€\u{0}"))
        #expect(try parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try parse(#""\ud83d\ude00 tail""#) == .string("😀 tail"))
        #expect(try parse("\"raw é € 😀 and \\n escape\"") == .string("raw é € 😀 and \n escape"))
        #expect(try parse("\"\u{7F}\"") == .string("\u{7F}"), "DEL needs no escape")
    }

    @Test func badEscapesAndSurrogates() {
        let cases: [(String, JSONParseError.Reason)] = [
            (#""\x""#, .invalidEscape), (#""\'""#, .invalidEscape), (#""\U0041""#, .invalidEscape), (#""\u12""#, .invalidEscape),
            (#""\u12G4""#, .invalidEscape), (#""\uD800""#, .loneSurrogate), (#""\uD800x""#, .loneSurrogate),
            (#""\uDC00""#, .loneSurrogate), (#""\uD800\u0041""#, .loneSurrogate), (#""\uD800\uD800""#, .loneSurrogate),
            (#""\uD800\n""#, .loneSurrogate), (#""\"#, .unexpectedEnd), (#""\u00"#, .unexpectedEnd), (#""abc"#, .unexpectedEnd),
        ]
        for (text, expected) in cases { #expect(reason(text) == expected, "\(text)") }
    }

    /// Long strings are scanned eight bytes at a time: whatever ends or
    /// breaks a plain run must be seen at every offset within a word.
    @Test func longStringsSeeEveryByteAtNoStoredOffsets() throws {
        for length in 0..<34 {
            let plain = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            #expect(try JSONParser().parse([0x22] + plain + [0x22]) == .string(String(decoding: plain, as: UTF8.self)))
            for offset in 0..<length {
                var control = plain
                control[offset] = 0x1F
                #expect(reason([0x22] + control + [0x22]) == .controlCharacter, "control at \(offset) of \(length)")
                var invalid = plain
                invalid[offset] = 0xFF
                #expect(reason([0x22] + invalid + [0x22]) == .invalidUTF8, "0xFF at \(offset) of \(length)")
                var early = plain
                early[offset] = 0x22
                #expect(reason([0x22] + early + [0x22]) == .trailingData, "quote at \(offset) of \(length)")
                var escaped = Array(plain[..<offset]) + [0x5C, 0x6E] + Array(plain[offset...])
                escaped.append(contentsOf: [0xC3, 0xA9])
                let expected = String(decoding: Array(plain[..<offset]) + [0x0A] + Array(plain[offset...]) + [0xC3, 0xA9], as: UTF8.self)
                #expect(try JSONParser().parse([0x22] + escaped + [0x22]) == .string(expected), "escape at \(offset) of \(length)")
            }
            #expect(reason([0x22] + plain) == .unexpectedEnd, "unterminated, \(length)")
        }
    }

    @Test func controlCharactersMustBeEscaped() {
        for byte in UInt8(0)..<0x20 {
            #expect(reason([0x22, 0x61, byte, 0x22]) == .controlCharacter, "byte \(byte)")
            #expect(reason([0x22, 0x5C, 0x6E, byte, 0x22]) == .controlCharacter, "byte \(byte) after an escape")
        }
    }

    @Test func utf8IsValidated() throws {
        let invalid: [[UInt8]] = [
            [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
            [0xF0, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x80], [0xC3], [0xE2, 0x82],
            [0xF0, 0x9F, 0x98], [0xC3, 0x28],
        ]
        for sequence in invalid {
            #expect(reason([0x22] + sequence + [0x22]) == .invalidUTF8, "\(sequence)")
            #expect(reason([0x22, 0x5C, 0x74] + sequence + [0x22]) == .invalidUTF8, "\(sequence) after an escape")
        }
        // A sequence cut by an escape is not rescued by the escape's own bytes.
        #expect(reason(Array("\"".utf8) + [0xC3] + Array(#"\u00A9""#.utf8)) == .invalidUTF8)
        let valid: [[UInt8]] = [[0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF]]
        for sequence in valid {
            let value = try JSONParser().parse([0x22] + sequence + [0x22])
            #expect(value.stringValue.map { Array($0.utf8) } == sequence)
        }
        #expect(reason([0xEF, 0xBB, 0xBF] + Array("{}".utf8)) == .unexpectedByte, "no byte order mark")
        #expect(reason([0xC3, 0xA9]) == .unexpectedByte, "non-ASCII outside strings")
    }

    @Test func structuralRejections() {
        let cases: [(String, JSONParseError.Reason)] = [
            ("", .unexpectedEnd), ("   ", .unexpectedEnd), ("[1,]", .unexpectedByte), ("[1,,2]", .unexpectedByte), ("[,1]", .unexpectedByte),
            (#"{"a":1,}"#, .unexpectedByte), (#"{"a" 1}"#, .unexpectedByte), (#"{a:1}"#, .unexpectedByte), (#"{'a':1}"#, .unexpectedByte),
            (#"{"a":1 "b":2}"#, .unexpectedByte), (#"{"a":1,"a":2}"#, .duplicateKey), (#"{"a":{"b":1,"b":1}}"#, .duplicateKey),
            ("[1", .unexpectedEnd), ("{", .unexpectedEnd), (#"{"a""#, .unexpectedEnd), (#"{"a":"#, .unexpectedEnd), ("[1 2]", .unexpectedByte),
            ("tru", .unexpectedEnd), ("trUe", .unexpectedByte), ("nul", .unexpectedEnd), ("True", .unexpectedByte), ("undefined", .unexpectedByte),
            ("{} {}", .trailingData), ("[]]", .trailingData), ("null x", .trailingData), ("1\u{0}", .trailingData),
            ("\u{0B}1", .unexpectedByte), ("\u{0C}1", .unexpectedByte), ("1\u{A0}", .trailingData), ("[1\u{2028}]", .unexpectedByte),
            ("/* c */ 1", .unexpectedByte), ("[1]//", .trailingData),
        ]
        for (text, expected) in cases { #expect(reason(text) == expected, "\(text.debugDescription)") }
    }

    @Test func duplicateKeysAreRefusedByBytes() throws {
        #expect(reason(#"{"a":1,"b":2,"a":3}"#) == .duplicateKey)
        #expect(reason(#"{"a":1,"\u0061":2}"#) == .duplicateKey, "an escape spelling the same key")
        _ = try parse(#"{"a":1,"A":2,"a ":3}"#)
    }

    @Test func depthIsLimited() throws {
        _ = try parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))
        #expect(reason(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)) == .tooDeep)
        _ = try parse(String(repeating: #"{"a":"#, count: 64) + "1" + String(repeating: "}", count: 64))
        #expect(reason(String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)) == .tooDeep)
        #expect(reason("[[[1]]]", maxDepth: 2) == .tooDeep)
        _ = try parse("[[[1]]]", maxDepth: 3)
        // Hostile nesting is refused at the limit, not by running out of stack.
        #expect(reason(String(repeating: "[", count: 1_000_000)) == .tooDeep)
        #expect(reason(String(repeating: #"{"a":["#, count: 500_000)) == .tooDeep)
    }

    @Test func errorsGiveOffsetsAndNeverQuoteTheInput() {
        do throws(JSONParseError) {
            _ = try JSONParser().parse(Array(#"{"secret-value": 01}"#.utf8))
            Issue.record("accepted a leading zero")
        } catch {
            #expect(error == JSONParseError(.leadingZero, at: 17))
            #expect(!error.description.contains("secret"))
            #expect(error.description == "JSON: number with a leading zero at byte 17")
        }
    }

    @Test func rawBufferAndStringEntryPointsAgree() throws {
        let text = #"{"a":[1,"é",{"b":null}]}"#
        let bytes = Array(text.utf8)
        let viaRaw = try bytes.withUnsafeBytes { buffer throws(JSONParseError) in try JSONParser().parse(buffer) }
        #expect(viaRaw == (try JSONParser().parse(bytes)))
        #expect(try JSONParser().parse(text) == viaRaw)
        #expect(try JSONValue(parsing: bytes) == viaRaw)
    }

    @Test func objectsPastTheMemberLimitAreRefusedWhereTheyCross() throws {
        let parser = JSONParser(maxMembers: 3)
        #expect(try parser.parse(#"{"a":1,"b":{"c":2,"d":3,"e":4},"f":5}"#).objectValue?.count == 3)
        let text = #"{"a":1,"b":2,"c":3,"d":4,"e":5}"#
        #expect(throws: JSONParseError(.tooManyMembers, at: 19)) { try parser.parse(text) }
        #expect(throws: JSONParseError.self) { try parser.parse(#"[{"a":1,"b":2,"c":3,"d":4}]"#) }
        #expect(try JSONParser().parse(text).objectValue?.count == 5)
    }
}
