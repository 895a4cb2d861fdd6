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

    /// Plain runs are copied eight bytes at a time until a byte needs an
    /// escape, and the last bytes as one overlapping word; escapes at every
    /// offset of strings shorter, as long as and longer than a word, past the
    /// initial capacity (the buffer grows), come out as the tree writer writes them.
    @Test func escapesAtEveryOffsetAndGrowth() {
        for (offset, total) in [1, 7, 8, 9, 12, 15, 16, 17, 20].flatMap({ total in (0..<total).map { ($0, total) } }) {
            for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "🙂", "/"] {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: total - 1 - offset)
                var stream = JSONStream(capacity: 1)
                stream.beginArray()
                stream.string(text)
                stream.string(text)
                stream.endArray()
                #expect(stream.bytes == JSONValue.array([.string(text), .string(text)]).jsonBytes(), "\(offset) \(special)")
            }
        }
    }

    /// A copy of a stream is a separate stream (the storage is shared until one writes).
    @Test func copiesDoNotShareWrites() {
        var first = JSONStream(capacity: 64)
        first.beginArray()
        first.integer(1)
        var second = first
        second.integer(2)
        second.endArray()
        first.null()
        first.endArray()
        #expect(first.string == "[1,null]")
        #expect(second.string == "[1,2]")
        var third = JSONStream()
        third.beginArray()
        third.integer(Int.min)
        third.integer(Int.max)
        third.integer(0)
        third.endArray()
        #expect(third.string == "[\(Int.min),\(Int.max),0]")
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
