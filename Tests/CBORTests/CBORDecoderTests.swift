import Testing
import TestSupport
@testable import CBOR

private func decode(_ hexString: String, limits: CBORDecoder.Limits = .default) throws(CBORError) -> CBORItem {
    try CBORDecoder(limits: limits).decode(hex(hexString))
}

/// RFC 8949 Appendix A: the encoding and the value it stands for. Every case is
/// decoded, compared, and re-encoded (these are all preferred encodings).
private let appendixA: [(String, CBOR)] = [
    ("00", 0), ("01", 1), ("0a", 10), ("17", 23), ("1818", 24), ("1819", 25), ("1864", 100),
    ("1903e8", 1000), ("1a000f4240", 1_000_000), ("1b000000e8d4a51000", 1_000_000_000_000),
    ("1bffffffffffffffff", .unsigned(.max)), ("3bffffffffffffffff", .negative(.max)),
    ("20", -1), ("29", -10), ("3863", -100), ("3903e7", -1000),
    ("f90000", .float(0.0)), ("f98000", .float(-0.0)), ("f93c00", .float(1.0)), ("fb3ff199999999999a", .float(1.1)),
    ("f93e00", .float(1.5)), ("f97bff", .float(65504.0)), ("fa47c35000", .float(100000.0)),
    ("fa7f7fffff", .float(3.4028234663852886e+38)), ("fb7e37e43c8800759c", .float(1.0e+300)),
    ("f90001", .float(5.960464477539063e-8)), ("f90400", .float(0.00006103515625)), ("f9c400", .float(-4.0)),
    ("fbc010666666666666", .float(-4.1)), ("f97c00", .float(.infinity)), ("f9fc00", .float(-.infinity)),
    ("f4", false), ("f5", true), ("f6", nil), ("f7", .undefined), ("f0", .simple(16)), ("f8ff", .simple(255)),
    ("c074323031332d30332d32315432303a30343a30305a", .tagged(0, "2013-03-21T20:04:00Z")),
    ("c11a514b67b0", .tagged(1, 1363896240)), ("d74401020304", .tagged(23, .bytes([1, 2, 3, 4]))),
    ("d818456449455446", .tagged(24, .bytes([0x64, 0x49, 0x45, 0x54, 0x46]))),
    ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])), ("60", ""), ("6161", "a"), ("6449455446", "IETF"),
    ("62225c", "\"\\"), ("62c3bc", "\u{00fc}"), ("63e6b0b4", "\u{6c34}"), ("64f0908591", "\u{10151}"),
    ("80", []), ("83010203", [1, 2, 3]), ("8301820203820405", [1, [2, 3], [4, 5]]),
    ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { CBOR.int($0) })),
    ("a0", [:]), ("a201020304", [1: 2, 3: 4]), ("a26161016162820203", ["a": 1, "b": [2, 3]]),
    ("826161a161626163", ["a", ["b": "c"]]),
    ("a56161614161626142616361436164614461656145", ["a": "A", "b": "B", "c": "C", "d": "D", "e": "E"]),
]

@Suite struct CBORDecoderTests {
    @Test func appendixAExamplesDecodeAndReencode() throws {
        for (encoding, expected) in appendixA {
            let item = try decode(encoding)
            #expect(item.value == expected, "decoding \(encoding)")
            #expect(expected.encoded() == hex(encoding), "encoding \(encoding)")
            #expect(Array(item.encoded) == hex(encoding))
        }
    }

    @Test func nanDecodesAndEncodesAsHalf() throws {
        for encoding in ["f97e00", "fa7fc00000", "fb7ff8000000000000"] {
            guard case .float(let value) = try decode(encoding).content else { Issue.record("not a float"); continue }
            #expect(value.isNaN)
        }
        #expect(CBOR.float(.nan).encoded() == hex("f97e00"))
    }

    @Test func indefiniteLengthItems() throws {
        #expect(try decode("5f42010243030405ff").value == .bytes([1, 2, 3, 4, 5]))
        #expect(try decode("7f657374726561646d696e67ff").value == "streaming")
        #expect(try decode("9fff").value == [])
        #expect(try decode("9f018202039f0405ffff").value == [1, [2, 3], [4, 5]])
        #expect(try decode("bf61610161629f0203ffff").value == ["a": 1, "b": [2, 3]])
        #expect(try decode("bf6346756ef563416d7421ff").value == ["Fun": true, "Amt": -2])
    }

    @Test func nonPreferredEncodingsKeepTheirOriginalBytes() throws {
        // A map with a two-byte count and a byte string with a two-byte length,
        // as some wallets send them: the slices must be the received bytes.
        let encoding = hex("b9000163666f6f59000301020a")
        let item = try CBORDecoder().decode(encoding)
        #expect(Array(item.encoded) == encoding)
        let value = try #require(item["foo"])
        #expect(Array(value.encoded) == hex("59000301020a"))
        #expect(value.value.encoded() == hex("4301020a"))
    }

    @Test func embeddedItemsDecodeFromTheSameBuffer() throws {
        let inner: CBOR = ["digestID": 7, "elementIdentifier": "family_name"]
        let outer = CBOR.array([.embedded(inner)]).encoded()
        let item = try CBORDecoder().decode(outer)
        let tagged = try #require(item.array?.first)
        #expect(Array(tagged.encoded) == CBOR.embedded(inner).encoded())
        let decoded = try tagged.decodeEmbedded("test")
        #expect(decoded["digestID"]?.int == 7)
        #expect(decoded.encoded.startIndex > 0, "inner item is a slice of the outer buffer")
    }

    @Test func duplicateMapKeysAreRejected() {
        #expect(throws: CBORError.duplicateMapKey(offset: 4)) { try decode("a26161016161 02") }
        // The same integer written in two encodings is still the same key.
        #expect(throws: CBORError.self) { try decode("a201021801 03") }
        #expect(throws: CBORError.self) { try decode("a2010218010 3") }
        #expect(throws: CBORError.self) { try decode("bf61610161610 2ff") }
    }

    /// Keys in preferred form are compared as received; others are re-encoded
    /// first. Both ways, and past the size where the set starts hashing, equal
    /// data items collide and different ones do not.
    @Test func duplicateKeysAreFoundByValueWhateverTheirEncoding() throws {
        // Byte strings: 41 00 and 58 01 00 are the same item.
        #expect(throws: CBORError.duplicateMapKey(offset: 4)) { try decode("a2 4100 01 580100 02") }
        // Text: a definite "a" and an indefinite one made of the chunk "a".
        #expect(throws: CBORError.duplicateMapKey(offset: 4)) { try decode("a2 6161 01 7f6161ff 02") }
        // Floats: 1.0 as binary16 and as binary64.
        #expect(throws: CBORError.duplicateMapKey(offset: 5)) { try decode("a2 f93c00 01 fb3ff0000000000000 02") }
        // A non-preferred key first, then its preferred twin.
        #expect(throws: CBORError.duplicateMapKey(offset: 4)) { try decode("a2 1801 01 01 02") }
        // Prefixes, integer vs text, and 1 vs 1.0 are different keys.
        #expect(try decode("a4 6161 01 626162 02 01 03 f93c00 04").entries?.count == 4)

        // Past 16 keys: distinct keys pass, a duplicate is found in either encoding.
        var distinct = "b4"
        for key in 0..<20 { distinct += hexString(CBOR.int(Int64(key)).encoded()) + "f6" }
        #expect(try decode(distinct).entries?.count == 20)
        var repeated = "b4"
        for key in 0..<19 { repeated += hexString(CBOR.int(Int64(key)).encoded()) + "f6" }
        #expect(throws: CBORError.self) { try decode(repeated + "1803f6") }
        #expect(throws: CBORError.self) { try decode(repeated + "03f6") }
    }

    /// Keys that are containers are refused where they start: comparing them
    /// cost a re-encoding of each, at every level of a nest of such keys.
    @Test func containerMapKeysAreRefused() throws {
        #expect(throws: CBORError.containerMapKey(offset: 1)) { try decode("a1 80 01") }
        #expect(throws: CBORError.containerMapKey(offset: 1)) { try decode("a1 a0 01") }
        #expect(throws: CBORError.containerMapKey(offset: 1)) { try decode("bf c100 01 ff") }
        #expect(throws: CBORError.containerMapKey(offset: 3)) { try decode("a2 0102 8101 03") }
        // The fuzzer's shape: thirty maps, each keyed by the next, around 10,000 items.
        let nest = [UInt8](repeating: 0xa1, count: 30) + [0x99, 0x27, 0x10] + [UInt8](repeating: 0, count: 10_030)
        #expect(throws: CBORError.containerMapKey(offset: 1)) { try CBORDecoder().decode(nest) }
        // Containers as values, and every scalar key, stay as they were.
        #expect(try decode("a4 01 80 61 61 a0 41 00 c1 00 f9 3c00 f6").entries?.count == 4)
    }

    @Test func malformedInputIsATypedError() {
        let cases: [(String, String)] = [
            ("", "empty"), ("18", "missing argument"), ("1901", "short argument"), ("62 61", "short text"),
            ("1c", "reserved 28"), ("1f", "indefinite integer"), ("ff", "lone break"), ("f818", "two-byte simple < 32"),
            ("5f4101 6161ff", "text chunk in byte string"), ("5f5f4101ffff", "nested indefinite chunk"),
            ("9f01", "unterminated indefinite array"), ("bf6161ff", "map key without value"), ("0000", "trailing bytes"),
            ("62c328", "invalid UTF-8"), ("df", "indefinite tag"), ("a1", "map without entries"),
        ]
        for (encoding, description) in cases {
            #expect(throws: CBORError.self, "\(description)") { try decode(encoding) }
        }
    }

    @Test func hugeLengthPrefixesFailBeforeAllocating() {
        // 2^62 bytes claimed, and a 2^62-item array and map.
        #expect(throws: CBORError.lengthExceedsInput(offset: 9)) { try decode("5b4000000000000000") }
        #expect(throws: CBORError.lengthExceedsInput(offset: 9)) { try decode("7b400000000000000061") }
        #expect(throws: CBORError.lengthExceedsInput(offset: 9)) { try decode("9b400000000000000001") }
        #expect(throws: CBORError.lengthExceedsInput(offset: 9)) { try decode("bb40000000000000000101") }
    }

    @Test func deepNestingHitsTheDepthLimit() {
        let deep = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
        #expect(throws: CBORError.depthLimitExceeded(limit: 32)) { try CBORDecoder().decode(deep) }
        let deepTags = [UInt8](repeating: 0xc1, count: 10_000) + [0x00]
        #expect(throws: CBORError.depthLimitExceeded(limit: 32)) { try CBORDecoder().decode(deepTags) }
        let deepIndefinite = [UInt8](repeating: 0x9f, count: 10_000)
        #expect(throws: CBORError.depthLimitExceeded(limit: 32)) { try CBORDecoder().decode(deepIndefinite) }
        let within = [UInt8](repeating: 0x81, count: 31) + [0x00]
        #expect((try? CBORDecoder().decode(within)) != nil)
    }

    @Test func itemAndSizeLimits() {
        let many = CBOR.array(Array(repeating: 0, count: 200)).encoded()
        #expect(throws: CBORError.itemLimitExceeded(limit: 100)) {
            try CBORDecoder(limits: .init(maxItems: 100)).decode(many)
        }
        #expect(throws: CBORError.inputTooLarge(size: many.count, limit: 64)) {
            try CBORDecoder(limits: .init(maxInputSize: 64)).decode(many)
        }
    }

    @Test func everyTruncationOfAValidItemFails() throws {
        let item: CBOR = ["version": "1.0", "documents": [["docType": "org.iso.18013.5.1.mDL", "n": .negative(70000), "f": .float(1.1)]],
                          "blob": .bytes(Array(repeating: 7, count: 300)), "t": .tagged(24, .bytes([0xa0]))]
        let encoding = item.encoded()
        for length in 0..<encoding.count {
            #expect(throws: CBORError.self) { try CBORDecoder().decode(Array(encoding.prefix(length))) }
        }
        #expect(try CBORDecoder().decode(encoding).value == item)
    }

    @Test func typedReadsExplainTheMismatch() throws {
        let document: CBOR = ["docType": 5]
        let item = try CBORDecoder().decode(document.encoded())
        #expect(throws: CBORError.unexpectedType(expected: "text string", context: "docType")) {
            try item.require("docType", in: "Document").requireText("docType")
        }
        #expect(throws: CBORError.missingKey("issuerSigned", context: "Document")) {
            try item.require("issuerSigned", in: "Document")
        }
        #expect(item[label: 1] == nil)
    }
}

@Suite struct CBOREncoderTests {
    @Test func preEncodedItemsAreSplicedVerbatim() {
        let transcript: [UInt8] = [0x83, 0xf6, 0xf6, 0x80]
        let built = CBOR.array(["DeviceAuthentication", .preEncoded(transcript)]).encoded()
        #expect(built == [0x82, 0x74] + Array("DeviceAuthentication".utf8) + transcript)
    }

    @Test func deterministicKeyOrderSortsEncodedKeys() {
        let map: CBOR = ["bb": 1, "a": 2, 10: 3, -1: 4]
        #expect(map.encoded(sortingMapKeys: true) == hex("a40a0320046161026262620 1"))
        #expect(map.encoded() == hex("a46262620161610 20a032004"))
    }

    @Test func headsUseTheShortestForm() {
        #expect(CBOR.bytes(Array(repeating: 0, count: 24)).encoded().prefix(2) == [0x58, 24])
        #expect(CBOR.bytes(Array(repeating: 0, count: 256)).encoded().prefix(3) == [0x59, 1, 0])
        #expect(CBOR.int(-25).encoded() == [0x38, 24])
        #expect(CBOR.int(.min).encoded() == hex("3b7fffffffffffffff"))
    }
}

@Suite struct CBORTextKeyTests {
    /// "K" (U+004B) and KELVIN SIGN (U+212A) are canonically equivalent to
    /// Swift's String but different data items to CBOR.
    @Test func textKeysCompareAsBytesNotAsUnicodeEquivalents() throws {
        let map: CBOR = .map([.init(.text("K"), 1), .init(.text("\u{212A}"), 2)])
        let item = try CBORDecoder().decode(map.encoded())
        #expect(item.entries?.count == 2, "two different keys, not a duplicate")
        let lookalike: CBOR = .map([.init(.text("device\u{212A}eyInfo"), 1)])
        #expect(try CBORDecoder().decode(lookalike.encoded())["deviceKeyInfo"] == nil, "a lookalike key does not answer for the real one")
        #expect(try CBORDecoder().decode(lookalike.encoded())["device\u{212A}eyInfo"]?.int == 1)
    }
}

/// One budget for every decode of one event (`CBORBudget`).
@Suite struct CBORBudgetTests {
    /// An array of `count` small integers: count + 1 items.
    static func array(_ count: Int) -> [UInt8] {
        CBOR.array((0..<count).map { .unsigned(UInt64($0 % 24)) }).encoded()
    }

    @Test func decodesSharingABudgetAreLimitedTogether() throws {
        let limits = CBORDecoder.Limits(maxItems: 1_000).budgeted()
        let decoder = CBORDecoder(limits: limits)
        // Each decode alone is well within the per-decode limit of 1,000 items.
        for _ in 0..<3 { _ = try decoder.decode(Self.array(299)) }
        #expect(limits.budget?.items == 900)
        #expect(throws: CBORError.budgetExceeded(items: 1_000, bytes: limits.budget!.maxBytes)) {
            _ = try decoder.decode(Self.array(299))
        }
        // Without a budget the same decodes all pass.
        let plain = CBORDecoder(limits: CBORDecoder.Limits(maxItems: 1_000))
        for _ in 0..<4 { _ = try plain.decode(Self.array(299)) }
    }

    @Test func cursorsReadOnTheSameBudget() throws {
        let limits = CBORDecoder.Limits(maxItems: 100).budgeted()
        let bytes = Self.array(60)[...]
        var first = try #require(CBORCursor(bytes, limits: limits))
        #expect(first.arrayCount() == 60)
        for _ in 0..<60 { #expect(first.unsigned() != nil) }
        var second = try #require(CBORCursor(bytes, limits: limits))
        #expect(second.arrayCount() == 60)
        var read = 0
        while second.unsigned() != nil { read += 1 }
        #expect(read == 100 - 61 - 1, "the second cursor stops where the event's budget ends")
    }

    @Test func bytesReadAreBudgetedToo() throws {
        let limits = CBORDecoder.Limits(maxItems: 1_000_000, maxInputSize: 1_000).budgeted(bytesPerInput: 2)
        let decoder = CBORDecoder(limits: limits)
        let input = CBOR.bytes([UInt8](repeating: 7, count: 600)).encoded()
        // 603 bytes each: three fit in 2,000, the fourth does not.
        for _ in 0..<3 { _ = try decoder.decode(input) }
        #expect(limits.budget?.bytes == 3 * input.count)
        #expect(throws: CBORError.budgetExceeded(items: 1_000_000, bytes: 2_000)) {
            _ = try decoder.decode(input)
        }
    }
}
