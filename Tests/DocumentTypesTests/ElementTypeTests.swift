import CBOR
import DocumentTypes
import Testing

/// Each element type admits its own CBOR shape and nothing else: every
/// type is tried with a value of every other shape.
struct ElementTypeTests {
    static func item(_ value: CBOR) throws -> CBORItem { try CBORDecoder().decode(value.encoded()) }

    static let samples: [(String, CBOR)] = [
        ("tstr", .text("Doe")), ("uint", .unsigned(21)), ("nint", .negative(4)), ("bool", .bool(true)), ("bstr", .bytes([0xff, 0xd8])),
        ("full-date", .tagged(1004, .text("1990-02-28"))), ("tdate", .tagged(0, .text("2024-01-01T00:00:00Z"))),
        ("tstr-array", .array([.text("DE"), .text("FR")])), ("uint-array", .array([.unsigned(1)])), ("empty-array", .array([])),
        ("map", .map([.init(.text("x"), .unsigned(1))])),
        ("privileges", .array([.map([.init(.text("vehicle_category_code"), .text("B"))])])),
        ("birth-date-map", .map([.init(.text("birth_date"), .tagged(1004, .text("1990-02-28"))), .init(.text("approximate_mask"), .text("00001111"))])),
        ("place", .map([.init(.text("country"), .text("DE")), .init(.text("locality"), .text("Berlin"))])),
        ("null", .null), ("date-as-text", .text("1990-02-28")), ("full-date-tagged-uint", .tagged(1004, .unsigned(19900228))),
    ]

    /// Which samples each type admits.
    static let admitted: [ElementType: Set<String>] = [
        .text: ["tstr", "date-as-text"], .unsigned: ["uint"], .integer: ["uint", "nint"], .boolean: ["bool"], .bytes: ["bstr"],
        .fullDate: ["full-date"], .dateTime: ["tdate"], .date: ["full-date", "tdate"],
        .textArray: ["tstr-array"], .textOrTextArray: ["tstr", "date-as-text", "tstr-array"],
        .array: ["tstr-array", "uint-array", "empty-array", "privileges"], .map: ["map", "birth-date-map", "place"],
        .drivingPrivileges: ["privileges", "empty-array"], .birthDate: ["full-date", "birth-date-map"], .placeOfBirth: ["place"],
    ]

    @Test(arguments: ElementType.allCases)
    func eachTypeAdmitsItsShapeOnly(_ type: ElementType) throws {
        let expected = try #require(Self.admitted[type], "\(type) has no expectation")
        for (name, value) in Self.samples {
            #expect(type.admits(try Self.item(value)) == expected.contains(name), "\(type.rawValue) and \(name)")
        }
    }
}
