import JSON
import Testing

@Suite struct JSONStreamTests {
    @Test func writesWhatTheTreeWriterWrites() {
        let tree: JSONValue = [
            "a": [["k": "v\u{1}\"\\/é"], [:], []],
            "b": .null,
            "c": .integer(-42),
            "d": ["e": ["nested": true, "x": .number(JSONNumber(1.5)!)]],
        ]
        var stream = JSONStream()
        stream.beginObject()
        stream.key("a")
        stream.beginArray()
        stream.beginObject()
        stream.key("k"); stream.string("v\u{1}\"\\/é")
        stream.endObject()
        stream.beginObject()
        stream.endObject()
        stream.beginArray()
        stream.endArray()
        stream.endArray()
        stream.key("b"); stream.string(orNull: nil)
        stream.key("c"); stream.integer(-42)
        stream.key("d")
        stream.beginObject()
        stream.key("e"); stream.value(["x": .number(JSONNumber(1.5)!), "nested": true])
        stream.endObject()
        stream.endObject()
        #expect(stream.string == tree.jsonString())
        #expect(stream.bytes == tree.jsonBytes())
    }

    @Test func aTopLevelScalarAndAnEmptyArray() {
        var scalar = JSONStream()
        scalar.string("x")
        #expect(scalar.string == "\"x\"")
        var array = JSONStream()
        array.beginArray()
        array.integer(1)
        array.null()
        array.string(orNull: "y")
        array.endArray()
        #expect(array.string == "[1,null,\"y\"]")
    }

    #if DEBUG
    /// Writing keys out of order would silently break the byte-for-byte
    /// agreement with `JSONWriter`'s sorted output; debug builds stop there.
    @Test func keysOutOfOrderStopADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            var stream = JSONStream()
            stream.beginObject()
            stream.key("b"); stream.null()
            stream.key("a"); stream.null()
        }
    }
    #endif
}
