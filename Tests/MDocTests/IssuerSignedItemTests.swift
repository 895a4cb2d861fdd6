import CBOR
import MDoc
import Testing

/// IssuerSignedItem has a fast reader for the common form and the general
/// one for everything else; both must read the same fields, and anything
/// unusual must still be read or refused exactly as the general reader does.
@Suite struct IssuerSignedItemTests {
    static let fields: [(CBOR, CBOR)] = [
        ("digestID", 7), ("random", .bytes([1, 2, 3, 4])), ("elementIdentifier", "driving_privileges"),
        ("elementValue", [["vehicle_category_code": "B"], .float(1.5)]),
    ]

    static func item(_ content: [UInt8]) throws -> IssuerSignedItem {
        let tagged = try CBORDecoder().decode(CBOR.tagged(24, .bytes(content)).encoded())
        return try IssuerSignedItem(tagged, context: "test")
    }

    static func expectFields(_ item: IssuerSignedItem) {
        #expect(item.digestID == 7)
        #expect(Array(item.random) == [1, 2, 3, 4])
        #expect(item.elementIdentifier == "driving_privileges")
        #expect(item.elementValue.value == .array([["vehicle_category_code": "B"], .float(1.5)]))
    }

    @Test func commonFormInAnyKeyOrder() throws {
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
            let map = CBOR.map(order.map { CBOR.MapEntry(Self.fields[$0].0, Self.fields[$0].1) })
            let item = try Self.item(map.encoded())
            Self.expectFields(item)
            #expect(Array(item.taggedBytes) == CBOR.tagged(24, .bytes(map.encoded())).encoded())
        }
    }

    /// Forms the fast reader leaves to the general one, which reads them alike.
    @Test func unusualFormsReadTheSame() throws {
        let canonical = CBOR.map(Self.fields.map { CBOR.MapEntry($0.0, $0.1) }).encoded()
        // A fifth, unknown entry.
        Self.expectFields(try Self.item(CBOR.map(Self.fields.map { CBOR.MapEntry($0.0, $0.1) } + [CBOR.MapEntry("extra", 1)]).encoded()))
        // The map as indefinite length.
        Self.expectFields(try Self.item([0xBF] + canonical.dropFirst() + [0xFF]))
        // "digestID" with a non-preferred (two-byte) text head.
        var longHead = canonical
        let digestKey = try #require(longHead.firstIndex(of: 0x68))
        longHead.replaceSubrange(digestKey...digestKey, with: [0x78, 0x08])
        Self.expectFields(try Self.item(longHead))
    }

    @Test func brokenFormsAreRefusedAsBefore() {
        let entries = Self.fields.map { CBOR.MapEntry($0.0, $0.1) }
        // "random" twice, in a map of four.
        let duplicate = CBOR.map([entries[0], entries[1], entries[1], entries[3]]).encoded()
        #expect(throws: MDocError.self) { try Self.item(duplicate) }
        // A missing field.
        #expect(throws: MDocError.self) { try Self.item(CBOR.map(Array(entries.prefix(3)) + [CBOR.MapEntry("other", 1)]).encoded()) }
        // digestID not an unsigned integer.
        #expect(throws: MDocError.self) { try Self.item(CBOR.map([CBOR.MapEntry("digestID", -1)] + entries.dropFirst()).encoded()) }
        // Bytes after the map.
        #expect(throws: MDocError.self) { try Self.item(CBOR.map(entries).encoded() + [0x00]) }
        // The map cut short.
        #expect(throws: MDocError.self) { try Self.item(Array(CBOR.map(entries).encoded().dropLast(3))) }
    }
}
