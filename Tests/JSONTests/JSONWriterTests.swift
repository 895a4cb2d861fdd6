import Testing
@testable import JSON

@Suite struct JSONWriterTests {
    @Test func compactWithSortedKeys() {
        let value: JSONValue = ["b": 1, "a": [true, false, .null], "c": ["z": "", "y": -3]]
        #expect(value.jsonString() == #"{"a":[true,false,null],"b":1,"c":{"y":-3,"z":""}}"#)
        #expect(value.jsonString(keyOrder: .insertion) == #"{"b":1,"a":[true,false,null],"c":{"z":"","y":-3}}"#)
    }

    @Test func sortingIsByUTF8Bytes() {
        let value: JSONValue = ["b": 1, "B": 2, "a": 3, "é": 4, "aa": 5, "": 6, "a0": 7, "Z": 8]
        #expect(value.jsonString() == #"{"":6,"B":2,"Z":8,"a":3,"a0":7,"aa":5,"b":1,"é":4}"#)
    }

    @Test func escapesOnlyWhatJSONRequires() {
        #expect(JSONValue.string("a\"b\\c/d").jsonString() == #""a\"b\\c/d""#)
        #expect(JSONValue.string("\u{8}\u{C}\n\r\t").jsonString() == #""\b\f\n\r\t""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{1F}\u{7F}").jsonString() == "\"\\u0000\\u0001\\u001f\u{7F}\"")
        #expect(JSONValue.string("é€😀\u{2028}").jsonString() == "\"é€😀\u{2028}\"", "non-ASCII stays UTF-8")
        #expect(JSONValue.string("https://example.com/a/b").jsonString() == #""https://example.com/a/b""#)
        let keyed: JSONValue = ["a\"\n": "x"]
        #expect(keyed.jsonString() == #"{"a\"\n":"x"}"#, "keys are escaped too")
    }

    @Test func numbers() throws {
        #expect(JSONValue.integer(30).jsonString() == "30")
        #expect(JSONValue.integer(-7).jsonString() == "-7")
        #expect(JSONValue.number(JSONNumber(Int64.min)).jsonString() == "-9223372036854775808")
        #expect(JSONValue.number(try #require(JSONNumber(2.0))).jsonString() == "2", "whole doubles print as integers")
        #expect(JSONValue.number(try #require(JSONNumber(2.5))).jsonString() == "2.5")
        #expect(JSONValue.number(try #require(JSONNumber(-0.0))).jsonString() == "0")
        #expect(JSONNumber(.nan) == nil)
        #expect(JSONNumber(.infinity) == nil)
        for double in [0.1, 1.0 / 3, 1e-7, 5e-324, 1e300, 1.7976931348623157e308, -2.2250738585072014e-308, 1e20, 123456.789] {
            let text = JSONValue.number(try #require(JSONNumber(double))).jsonString()
            let back = try JSONParser().parse(Array(text.utf8))
            #expect(back.numberValue?.double == double, "\(double) → \(text)")
        }
        #expect(try JSONParser().parse("9007199254740993").jsonString() == "9007199254740993", "integers keep every digit")
    }

    @Test func parseThenWriteThenParseIsStable() throws {
        let documents = [
            #"{"z":[1,2.5,-0.125,1e-3,true,false,null,"s\u00e9\n"],"a":{"nested":{"deeper":[[],{}]}}}"#,
            #"[{"b":1,"a":2},{"a":3,"b":4}]"#, #""just a string with \"quotes\" and \\ and \/""#, "123", "-0.5e10", "[]", "{}",
            #"{"\u0000":"\ud83d\ude00","k\u212A":"\u212A"}"#,
        ]
        for document in documents {
            let parsed = try JSONParser().parse(Array(document.utf8))
            for order in [JSONWriter.KeyOrder.sorted, .insertion] {
                let written = parsed.jsonBytes(keyOrder: order)
                let reparsed = try JSONParser().parse(written)
                #expect(reparsed == parsed, "\(document)")
                #expect(reparsed.jsonBytes(keyOrder: order) == written, "writing is deterministic: \(document)")
            }
        }
        let insertionOrder = try JSONParser().parse(#"{"b":1,"a":2}"#)
        #expect(insertionOrder.jsonString(keyOrder: .insertion) == #"{"b":1,"a":2}"#)
    }

    @Test func objectEditing() {
        var object: JSONObject = ["a": 1]
        object["b"] = "x"
        object["a"] = 2
        #expect(JSONValue.object(object).jsonString(keyOrder: .insertion) == #"{"a":2,"b":"x"}"#)
        object["a"] = nil
        #expect(object.keys == ["b"])
        let secondB = object.append("b", 3)
        #expect(!secondB, "no second member with one key")
        let newC = object.append("c", .null)
        #expect(newC)
        #expect(object.contains("c") && !object.contains("a"))
        #expect(object == ["c": .null, "b": "x"], "equality ignores member order")
        #expect(object != ["b": "x"])
    }

    @Test func optionalStringsBecomeNull() {
        #expect(JSONValue(nil as String?) == .null)
        #expect(JSONValue("t" as String?) == "t")
    }
}
