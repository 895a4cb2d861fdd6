import CBOR
import Crypto
import Foundation
@testable import MDoc
import Testing

/// The MSO has an in-place reader for the form issuers write and the general
/// tree reader for everything else. Every case here is read both ways: the
/// public reader must give exactly what the general one gives — the same
/// fields, or the same error — and the fast reader must take the common
/// forms (or the comparison would only ever test the general reader).
@Suite struct MobileSecurityObjectTests {
    /// What a reader made of a payload, comparable.
    struct Read: Equatable {
        let version: String
        let digestAlgorithm: HashAlgorithm
        let valueDigests: [Identifier: [UInt64: [UInt8]]]
        let deviceKey: [UInt8]?
        let docType: String
        let dates: [Date]
        let status: MSOStatus?

        init(_ mso: MobileSecurityObject) {
            status = mso.status
            version = mso.version
            digestAlgorithm = mso.digestAlgorithm
            valueDigests = mso.valueDigests.mapValues { $0.mapValues(Array.init) }
            deviceKey = mso.deviceKey.uncompressedPoint
            docType = mso.docType
            dates = [mso.signed, mso.validFrom, mso.validUntil]
        }
    }

    static func read(_ payload: [UInt8], general: Bool) -> Result<Read, MDocError> {
        Result { () throws(MDocError) in
            Read(general ? try MobileSecurityObject(general: payload[...]) : try MobileSecurityObject(payload: payload[...]))
        }
    }

    /// Reads `payload` both ways and expects the same; `fast` says whether the in-place reader must take it.
    @discardableResult
    static func expectSame(_ payload: [UInt8], fast: Bool?, _ note: String, sourceLocation: SourceLocation = #_sourceLocation) -> Result<Read, MDocError> {
        let general = read(payload, general: true)
        let public_ = read(payload, general: false)
        #expect(public_ == general, "\(note)", sourceLocation: sourceLocation)
        if let fast {
            #expect((MobileSecurityObject.commonForm(payload[...]) != nil) == fast, "\(note): fast path \(fast ? "not taken" : "taken")", sourceLocation: sourceLocation)
        }
        return general
    }

    static let deviceKey: CBOR = {
        let key = try! PrivateKey(curve: .p256, scalar: Array(repeating: 0, count: 31) + [7])
        return COSEKey.encode(key.publicKey)
    }()

    static func digest(_ seed: UInt8) -> CBOR { .bytes(Array(repeating: seed, count: 32)) }

    static func tdate(_ text: String) -> CBOR { .tagged(0, .text(text)) }

    /// The MSO's entries as the test issuer writes them, in order.
    static var entries: [(String, CBOR)] {
        [
            ("version", "1.0"),
            ("digestAlgorithm", "SHA-256"),
            ("valueDigests", [
                "org.iso.18013.5.1": [0: digest(1), 1: digest(2), 24: digest(3), 70000: digest(4)],
                "org.iso.18013.5.1.aamva": [5: digest(5)],
            ]),
            ("deviceKeyInfo", ["deviceKey": deviceKey]),
            ("docType", "org.iso.18013.5.1.mDL"),
            ("validityInfo", ["signed": tdate("2024-01-01T00:00:00Z"), "validFrom": tdate("2024-01-01T00:00:00Z"),
                              "validUntil": tdate("2025-01-01T00:00:00Z")]),
        ]
    }

    /// A map of raw encoded entries, definite.
    static func map(_ entries: [[UInt8]]) -> [UInt8] {
        head(5, entries.count) + entries.flatMap { $0 }
    }

    static func head(_ major: UInt8, _ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        CBOR.appendHead(major: major, UInt64(count), to: &out)
        return out
    }

    static func entry(_ key: String, _ value: CBOR) -> [UInt8] { CBOR.text(key).encoded() + value.encoded() }

    static func tagged(_ mso: [UInt8]) -> [UInt8] { CBOR.tagged(24, .bytes(mso)).encoded() }

    static var canonical: [UInt8] { map(entries.map { entry($0.0, $0.1) }) }

    @Test func commonFormsAreReadInPlaceAndAlike() throws {
        let plain = Self.expectSame(Self.tagged(Self.canonical), fast: true, "test issuer form")
        let read = try plain.get()
        #expect(read.valueDigests[Identifier("org.iso.18013.5.1")]?[70000] == Array(repeating: 4, count: 32))
        #expect(read.valueDigests.count == 2 && read.deviceKey != nil)

        // Any key order.
        for order in [[5, 4, 3, 2, 1, 0], [2, 0, 5, 1, 3, 4]] {
            Self.expectSame(Self.tagged(Self.map(order.map { Self.entry(Self.entries[$0].0, Self.entries[$0].1) })), fast: true, "order \(order)")
        }
        // Bare, without the tag-24 wrapper.
        Self.expectSame(Self.canonical, fast: true, "bare map")
        // An unknown entry (a later edition's "status"), and extra keys inside deviceKeyInfo and validityInfo.
        let extra = Self.entries.map { Self.entry($0.0, $0.1) } + [Self.entry("status", ["status_list": ["idx": 1, "uri": "https://x"]])]
        Self.expectSame(Self.tagged(Self.map(extra)), fast: true, "extra entry")
        var inner = Self.entries
        inner[3].1 = ["deviceKey": Self.deviceKey, "keyAuthorizations": ["nameSpaces": ["org.iso.18013.5.1"]]]
        inner[5].1 = ["signed": Self.tdate("2024-01-01T00:00:00Z"), "validFrom": .text("2024-01-01T00:00:00Z"),
                      "validUntil": Self.tdate("2025-01-01T00:00:00.5+02:00"), "expectedUpdate": Self.tdate("2024-06-01T00:00:00Z")]
        Self.expectSame(Self.tagged(Self.map(inner.map { Self.entry($0.0, $0.1) })), fast: true, "extra inner keys, untagged tdate")
        // Empty valueDigests, an empty namespace, and the largest digestID.
        var empty = Self.entries
        empty[2].1 = ["a": [:], "b": [.unsigned(.max): Self.digest(9)]]
        Self.expectSame(Self.tagged(Self.map(empty.map { Self.entry($0.0, $0.1) })), fast: true, "empty namespace, max digestID")
        empty[2].1 = [:]
        Self.expectSame(Self.tagged(Self.map(empty.map { Self.entry($0.0, $0.1) })), fast: true, "empty valueDigests")
        // Non-ASCII namespace names that differ in bytes but are equal as Swift
        // strings: both readers keep both, namespaces being their bytes.
        var unicode = Self.entries
        unicode[2].1 = ["caf\u{E9}": [1: Self.digest(1)], "cafe\u{301}": [2: Self.digest(2)]]
        let both = Self.expectSame(Self.tagged(Self.map(unicode.map { Self.entry($0.0, $0.1) })), fast: true, "canonically equal names")
        #expect((try? both.get())?.valueDigests.count == 2)
    }

    /// Wider heads than needed are well-formed; the decoder reads them as the
    /// same values, and so must the in-place reader.
    @Test func nonPreferredHeadsReadTheSame() {
        var entries = Self.entries.map { Self.entry($0.0, $0.1) }
        // digestIDs and a digest length with wider heads: 0 as 19 0000, 24 as 1a 00000018.
        let spaces: [UInt8] = Self.head(5, 1) + CBOR.text("ns").encoded() + [0xB8, 0x02]
            + [0x19, 0x00, 0x00] + [0x59, 0x00, 0x02, 0xAA, 0xBB]
            + [0x1A, 0x00, 0x00, 0x00, 0x18] + CBOR.bytes([1]).encoded()
        entries[2] = CBOR.text("valueDigests").encoded() + spaces
        // "version" with a one-byte-length text head.
        entries[0] = [0x78, 0x07] + Array("version".utf8) + [0x79, 0x00, 0x03] + Array("1.0".utf8)
        let mso: [UInt8] = [0xB9, 0x00, 0x06] + entries.joined()
        Self.expectSame(Self.tagged(mso), fast: true, "wide heads")
        // The tag and the embedding bstr with wide heads.
        let wide: [UInt8] = [0xD9, 0x00, 0x18, 0x5A] + withUnsafeBytes(of: UInt32(mso.count).bigEndian, Array.init) + mso
        Self.expectSame(wide, fast: true, "wide tag and bstr")
        // The same digestID twice, once narrow and once wide: a duplicate key to the decoder.
        let duplicate = Self.head(5, 1) + CBOR.text("ns").encoded() + [0xA2, 0x07] + CBOR.bytes([1]).encoded() + [0x18, 0x07] + CBOR.bytes([2]).encoded()
        entries[2] = CBOR.text("valueDigests").encoded() + duplicate
        let refused = Self.expectSame(Self.tagged(Self.map(entries)), fast: false, "duplicate digestID")
        #expect(throws: MDocError.self) { try refused.get() }
    }

    /// Forms the in-place reader leaves to the general one.
    @Test func unusualFormsFallBackAndReadTheSame() {
        let entries = Self.entries.map { Self.entry($0.0, $0.1) }
        func indefinite(_ entries: [[UInt8]]) -> [UInt8] { [0xBF] + entries.flatMap { $0 } + [0xFF] }
        Self.expectSame(Self.tagged(indefinite(entries)), fast: false, "indefinite MSO map")
        var inner = entries
        inner[2] = CBOR.text("valueDigests").encoded() + [0xBF] + CBOR.text("ns").encoded() + [0xA1, 0x01] + CBOR.bytes([1]).encoded() + [0xFF]
        Self.expectSame(Self.tagged(Self.map(inner)), fast: false, "indefinite valueDigests")
        inner[2] = CBOR.text("valueDigests").encoded() + [0xA1] + CBOR.text("ns").encoded() + [0xBF, 0x01] + CBOR.bytes([1]).encoded() + [0xFF]
        Self.expectSame(Self.tagged(Self.map(inner)), fast: false, "indefinite namespace")
        inner[2] = CBOR.text("valueDigests").encoded() + [0xA1] + CBOR.text("ns").encoded() + [0xA1, 0x01, 0x5F, 0x41, 0x01, 0x41, 0x02, 0xFF]
        Self.expectSame(Self.tagged(Self.map(inner)), fast: false, "indefinite digest bstr")
        inner = entries
        inner[0] = CBOR.text("version").encoded() + [0x7F, 0x61, 0x31, 0x62, 0x2E, 0x30, 0xFF]
        Self.expectSame(Self.tagged(Self.map(inner)), fast: false, "indefinite version text")
        // An unknown entry under an integer key: the general reader ignores it.
        let integerKey = Self.expectSame(Self.tagged(Self.map(entries + [CBOR.unsigned(1).encoded() + [0x01]])), fast: false, "an integer key")
        #expect((try? integerKey.get()) != nil)
        // An indefinite bstr around the MSO.
        Self.expectSame([0xD8, 0x18, 0x5F] + CBOR.bytes(Self.canonical).encoded() + [0xFF], fast: false, "indefinite embedding")
    }

    @Test func brokenFormsAreRefusedAsBefore() {
        let entries = Self.entries.map { Self.entry($0.0, $0.1) }
        var cases: [(String, [UInt8])] = []
        for index in entries.indices {
            cases.append(("missing \(Self.entries[index].0)", Self.tagged(Self.map(entries.enumerated().filter { $0.offset != index }.map(\.element)))))
            cases.append(("\(Self.entries[index].0) twice", Self.tagged(Self.map(entries + [entries[index]]))))
            cases.append(("\(Self.entries[index].0) as an integer", Self.tagged(Self.map(entries.enumerated().map {
                $0.offset == index ? Self.entry(Self.entries[index].0, 5) : $0.element
            }))))
        }
        let extra = Self.entry("status", 1)
        cases.append(("an unknown key twice", Self.tagged(Self.map(entries + [extra, extra]))))
        func withDigests(_ value: CBOR) -> [UInt8] {
            Self.tagged(Self.map(entries.enumerated().map { $0.offset == 2 ? Self.entry("valueDigests", value) : $0.element }))
        }
        cases.append(("unknown digest algorithm", Self.tagged(Self.map(entries.enumerated().map { $0.offset == 1 ? Self.entry("digestAlgorithm", "MD5") : $0.element }))))
        cases.append(("negative digestID", withDigests(["ns": [-1: Self.digest(1)]])))
        cases.append(("text digest", withDigests(["ns": [1: "abc"]])))
        cases.append(("integer namespace", withDigests([1: [1: Self.digest(1)]])))
        cases.append(("namespace twice", withDigests(.map([.init("ns", [1: Self.digest(1)]), .init("ns", [2: Self.digest(2)])]))))
        cases.append(("namespace not a map", withDigests(["ns": [Self.digest(1)]])))
        cases.append(("invalid UTF-8 namespace", Self.tagged(Self.map(entries.enumerated().map {
            $0.offset == 2 ? CBOR.text("valueDigests").encoded() + [0xA1, 0x62, 0xC3, 0x28, 0xA0] : $0.element
        }))))
        cases.append(("invalid UTF-8 unknown key", Self.tagged(Self.map(entries + [[0x62, 0xC3, 0x28, 0x01]]))))
        cases.append(("deviceKeyInfo without deviceKey", Self.tagged(Self.map(entries.enumerated().map { $0.offset == 3 ? Self.entry("deviceKeyInfo", ["other": 1]) : $0.element }))))
        cases.append(("a bad date", Self.tagged(Self.map(entries.enumerated().map {
            $0.offset == 5 ? Self.entry("validityInfo", ["signed": Self.tdate("yesterday"), "validFrom": Self.tdate("2024-01-01T00:00:00Z"), "validUntil": Self.tdate("2025-01-01T00:00:00Z")]) : $0.element
        }))))
        cases.append(("bytes after the MSO in the bstr", Self.tagged(Self.canonical + [0x00])))
        cases.append(("bytes after the tag", Self.tagged(Self.canonical) + [0x00]))
        cases.append(("another tag", CBOR.tagged(25, .bytes(Self.canonical)).encoded()))
        cases.append(("not a map", Self.tagged(CBOR.array([1]).encoded())))
        cases.append(("a map claiming more entries than it has", Self.tagged([0xA7] + Self.canonical.dropFirst())))
        for (note, payload) in cases {
            let result = Self.expectSame(payload, fast: false, note)
            #expect(throws: MDocError.self, "\(note)") { try result.get() }
        }
    }

    /// Every truncation and a sweep of single-byte changes over a whole MSO:
    /// whatever each reads as, both readers agree, refusals included.
    @Test func mutationsReadTheSame() {
        let payload = Self.tagged(Self.canonical)
        for length in 0..<payload.count {
            Self.expectSame(Array(payload.prefix(length)), fast: nil, "truncated to \(length)")
        }
        var accepted = 0, refused = 0
        for index in payload.indices {
            let original = payload[index]
            for replacement: UInt8 in [0x00, 0x01, 0x17, 0x18, 0x1F, 0x40, 0x5F, 0x60, 0x7F, 0x9F, 0xA0, 0xBF, 0xD8, 0xF6, 0xFF, original ^ 0x01, original &+ 1] where replacement != original {
                var mutated = payload
                mutated[index] = replacement
                let result = Self.expectSame(mutated, fast: nil, "byte \(index) \(original) → \(replacement)")
                if case .success = result { accepted += 1 } else { refused += 1 }
            }
        }
        // The sweep must exercise both outcomes to mean anything.
        #expect(accepted > 0 && refused > 0)
    }

    /// The item limit holds for the MSO as a whole: the in-place reader counts
    /// items as the decoder does, so at the limit both accept and past it both refuse.
    @Test func itemLimitIsTheDecoders() {
        // Items besides the digests: map 1 + 6 keys + version, algorithm, docType 3
        // + valueDigests map 1 + namespace key and map 2 + deviceKeyInfo (1 + 1 + COSE_Key 1 + 8)
        // + validityInfo (1 + 3 × 3). Each digest is 2 items (id, bstr).
        let others = 1 + 6 + 3 + 1 + 2 + (1 + 1 + 1 + 8) + (1 + 9)
        let fit = (CBORDecoder.Limits.default.maxItems - others) / 2
        var outcomes: [Bool] = []
        for count in [fit, fit + 1] {
            var entries = Self.entries
            entries[2].1 = .map([.init("ns", .map((0..<count).map { CBOR.MapEntry(.unsigned(UInt64($0)), .bytes([1])) }))])
            let payload = Self.tagged(Self.map(entries.map { Self.entry($0.0, $0.1) }))
            let result = Self.expectSame(payload, fast: nil, "\(count) digests")
            outcomes.append((try? result.get()) != nil)
        }
        #expect(outcomes == [true, false])
    }
}
