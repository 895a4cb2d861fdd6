import Crypto
import Foundation
import StatusList
import Testing

/// The draft's list encodings (`shared/vectors/status-list/draft20/lists`):
/// each decodes to what its `.expected.json` states.
@Suite(.enabled(if: ListVectors.available, "\(ListVectors.missing)"))
struct DraftListVectorTests {
    @Test(arguments: ["bits1-16-section4.1", "bits2-12-section4.1", "appendix-bits1", "appendix-bits2", "appendix-bits4", "appendix-bits8"])
    func list(name: String) throws {
        let expected = try ListVectors.object("draft20/lists/\(name).expected.json")
        let list = try StatusBits(cbor: try ListVectors.hex("draft20/lists/\(name).cbor.hex"))

        #expect(list.bits == expected["bits"] as? Int)
        #expect(list.bytes.count == expected["decompressed_len"] as? Int)
        #expect(hex(HashAlgorithm.sha256.hash(list.bytes)) == expected["decompressed_sha256"] as? String)
        #expect(list.count == expected["entries_capacity"] as? Int)

        let statuses = try #require(expected["statuses"] as? [[String: Any]])
        #expect(!statuses.isEmpty)
        for entry in statuses {
            let index = try #require(entry["idx"] as? Int)
            #expect(list.status(at: UInt64(index)).map(Int.init) == entry["status"] as? Int, "index \(index)")
        }
        for probe in try #require(expected["zero_probes"] as? [Int]) {
            #expect(list.status(at: UInt64(probe)) == 0, "probe \(probe)")
        }
        let outOfRange = try #require(expected["first_out_of_range_index"] as? Int)
        #expect(list.status(at: UInt64(outOfRange - 1)) != nil)
        #expect(list.status(at: UInt64(outOfRange)) == nil)

        var nonZero = 0
        for index in 0..<list.count where list.status(at: UInt64(index)) != 0 { nonZero += 1 }
        #expect(nonZero == expected["nonzero_count"] as? Int)
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
