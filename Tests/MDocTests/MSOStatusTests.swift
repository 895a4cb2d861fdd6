import CBOR
import Foundation
@testable import MDoc
import Testing
import TestSupport

/// The MSO's `status` member: both references read with their members,
/// members reserved for future use ignored, known members of the wrong type
/// refused, and the in-place MSO reader agreeing with the general one.
@Suite struct MSOStatusTests {
    static func status(_ item: CBOR) -> Result<MSOStatus, MDocError> {
        Result { () throws(MDocError) in try MSOStatus(try! CBORDecoder().decode(item.encoded())) }
    }

    @Test func bothReferencesAndTheirMembersAreRead() throws {
        let read = try Self.status([
            "status_list": ["idx": 412, "uri": "https://example.com/statuslists/1", "certificate": .bytes([0x30, 0x82])],
            "identifier_list": ["id": .bytes([0xab, 0xcd]), "uri": "https://example.com/identifiers/1"],
        ]).get()
        #expect(read.statusList == .init(index: 412, uri: "https://example.com/statuslists/1", certificate: [0x30, 0x82]))
        #expect(read.identifierList == .init(id: [0xab, 0xcd], uri: "https://example.com/identifiers/1"))
        #expect(read.hasReference)
    }

    @Test func reservedMembersAreIgnoredInsideAndBeside() throws {
        let read = try Self.status([
            "status_list": ["idx": 7, "uri": "https://x/l", "vendor_ext": "custom"],
            "custom_ext": "value",
        ]).get()
        #expect(read.statusList?.index == 7 && read.identifierList == nil)
        #expect(try !Self.status(["custom_ext": "value"]).get().hasReference)
        #expect(try !Self.status([:]).get().hasReference)
    }

    @Test(arguments: [
        ("status is not a map", CBOR.array([])),
        ("idx negative", ["status_list": ["idx": .negative(0), "uri": "https://x"]]),
        ("idx text", ["status_list": ["idx": "1", "uri": "https://x"]]),
        ("idx missing", ["status_list": ["uri": "https://x"]]),
        ("uri bytes", ["status_list": ["idx": 1, "uri": .bytes([1])]]),
        ("uri missing", ["identifier_list": ["id": .bytes([1])]]),
        ("id text", ["identifier_list": ["id": "ab", "uri": "https://x"]]),
        ("certificate text", ["identifier_list": ["id": .bytes([1]), "uri": "https://x", "certificate": "MII"]]),
        ("status_list not a map", ["status_list": [1, 2]]),
    ] as [(String, CBOR)])
    func wrongTypesAreMalformed(_ name: String, _ item: CBOR) {
        guard case .failure(.malformed(let detail)) = Self.status(item) else {
            Issue.record("\(name): accepted or not malformed")
            return
        }
        #expect(detail.hasPrefix("MSO.status"), "\(name): \(detail)")
    }

    @Test func aWrongStatusMakesTheWholeMSOMalformedBothWays() throws {
        let entries = MobileSecurityObjectTests.entries.map { MobileSecurityObjectTests.entry($0.0, $0.1) }
        let bad = MobileSecurityObjectTests.map(entries + [MobileSecurityObjectTests.entry("status", ["status_list": ["idx": "x", "uri": "u"]])])
        let result = MobileSecurityObjectTests.expectSame(MobileSecurityObjectTests.tagged(bad), fast: false, "bad status")
        guard case .failure(.malformed(let detail)) = result else { Issue.record("accepted"); return }
        #expect(detail.contains("MSO.status.status_list.idx"))

        let good = MobileSecurityObjectTests.map(entries + [MobileSecurityObjectTests.entry("status", ["identifier_list": ["id": .bytes([9]), "uri": "https://x"]])])
        let read = try MobileSecurityObjectTests.expectSame(MobileSecurityObjectTests.tagged(good), fast: true, "good status").get()
        #expect(read.status?.identifierList?.id == [9])
        // Twice is a duplicate key, refused by both readers.
        let twice = MobileSecurityObjectTests.map(entries + [MobileSecurityObjectTests.entry("status", [:]), MobileSecurityObjectTests.entry("status", [:])])
        #expect(throws: MDocError.self) { try MobileSecurityObject(payload: MobileSecurityObjectTests.tagged(twice)[...]) }
    }
}

/// The published vectors: the draft -15 mdoc MSO naming index 412, and the
/// MSO `status` maps built after multipaz's and mdoc-ts's tests.
@Suite(.enabled(if: Vectors.available, "shared/vectors not found: set VERIDOC_VECTORS or place shared/vectors next to the package"))
struct MSOStatusVectorTests {
    @Test func theDraft15MDocNamesIndex412() throws {
        let mso = try MobileSecurityObject(payload: Vectors.hex("status-list/draft15-mdoc/mso.cbor.hex")[...])
        #expect(mso.status?.statusList == .init(index: 412, uri: "https://example.com/statuslists/1"))
        #expect(mso.status?.identifierList == nil)
        #expect(mso.docType == "org.iso.18013.5.1.mDL")
    }

    @Test func everyStatusCaseParsesAsItsSourceSays() throws {
        let cases = try #require(try Vectors.json("status-list/derived-identifier-list/mso_status_cases.json") as? [[String: Any]])
        let expected = try Vectors.jsonObject("status-list/derived-identifier-list/expected.json")
        #expect(cases.count >= 10)
        var read: [String: MSOStatus] = [:]
        for entry in cases {
            let name = try #require(entry["name"] as? String)
            let bytes = hex(try #require(entry["status_cbor_hex"] as? String))
            read[name] = try MSOStatus(try CBORDecoder().decode(bytes))
        }
        let listed = try #require(expected["listed_identifiers"] as? [String])
        let id1 = hex(try #require(listed.first))
        #expect(read["revoked_id1"]?.identifierList?.id == id1)
        #expect(read["mdocts_status_list_only"]?.statusList == .init(index: 42, uri: "https://issuer.example/status/1"))
        #expect(read["mdocts_identifier_list_only"]?.identifierList?.id == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(read["mdocts_both"]?.statusList?.index == 7 && read["mdocts_both"]?.identifierList?.id == [0xab, 0xcd])
        #expect(read["mdocts_status_list_with_certificate"]?.statusList?.certificate == [0x30, 0x82, 0x01, 0x00])
        #expect(read["mdocts_identifier_list_with_certificate"]?.identifierList?.certificate == [0x30, 0x82, 0x02, 0x00])
        #expect(read["mdocts_status_list_unknown_key"]?.statusList?.index == 7)
        #expect(read["mdocts_identifier_list_unknown_key"]?.identifierList?.id == [0xff])
        #expect(read["mdocts_rfu_beside_status_list"]?.statusList != nil)
        #expect(read["mdocts_rfu_only"]?.hasReference == false)
        #expect(read["mdocts_empty"]?.hasReference == false)
        #expect(read["not_revoked_absent"]?.identifierList?.id == hex(try #require(expected["absent_identifier_example"] as? String)))
    }
}
