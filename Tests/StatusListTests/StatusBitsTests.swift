import CBOR
import Crypto
import Foundation
import StatusList
import TestIssuer
import Testing

/// The bit layout of draft §4.1, through the test issuer's lists and the standalone decoder.
struct StatusBitsTests {
    /// The draft's §4.1 examples, as the text prints them.
    @Test func sectionFourOneExamples() throws {
        let one = try StatusBits(bits: 1, bytes: [0xb9, 0xa3])
        #expect(one.count == 16)
        #expect((0..<16).map { one.status(at: UInt64($0))! } == [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1])
        let two = try StatusBits(bits: 2, bytes: [0xc9, 0x44, 0xf9])
        #expect(two.count == 12)
        #expect((0..<12).map { two.status(at: UInt64($0))! } == [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3])
    }

    /// Every width round-trips through a signed token: each entry as issued,
    /// the last index answered, the first one past it refused.
    @Test(arguments: [1, 2, 4, 8])
    func roundTrip(bits: Int) throws {
        let world = try ListWorld()
        var random = TestIssuer.SeededRandom(seed: UInt64(bits))
        let values = random.bytes(800).map { $0 & UInt8((1 << bits) - 1) }
        let token = try ListToken(bytes: world.token(world.publisher(.statusList, .statuses(bits: bits, values))), kind: .statusList)
        let list = try #require(token.statusList)
        #expect(list.bits == bits)
        #expect(list.count == values.count)
        for (index, value) in values.enumerated() {
            #expect(list.status(at: UInt64(index)) == value, "entry \(index)")
        }
        #expect(try list.requireStatus(at: UInt64(values.count - 1)) == values.last)
        #expect(list.status(at: UInt64(values.count)) == nil)
        #expect(list.status(at: .max) == nil)
        let error = listError { () throws(StatusListError) in _ = try list.requireStatus(at: UInt64(values.count)) }
        #expect(error?.step == "index")
        #expect(error.map { !$0.detail.contains(String(values.count)) } == true, "the detail names no index")
    }

    @Test(arguments: [0, 3, 5, 16])
    func widthsOtherThanOneTwoFourEight(bits: UInt64) throws {
        let map = CBOR.map([.init("bits", .unsigned(bits)), .init("lst", .bytes(try TestIssuer.Zlib.compress([0xff])))]).encoded()
        #expect(listError { () throws(StatusListError) in _ = try StatusBits(cbor: map) }?.step == "claims")
        #expect(listError { () throws(StatusListError) in _ = try StatusBits(bits: Int(bits), bytes: [0]) }?.step == "claims")
    }

    @Test func listShapes() throws {
        let lst = try TestIssuer.Zlib.compress([0x01])
        let shapes: [(CBOR, String)] = [
            (.map([.init("bits", 1), .init("lst", .text("eNrbuRgAAhcBXQ"))]), "claims"),
            (.map([.init("bits", 1)]), "claims"),
            (.map([.init("lst", .bytes(lst))]), "claims"),
            (.map([.init("bits", -1), .init("lst", .bytes(lst))]), "claims"),
            (.map([.init("bits", 1), .init("lst", .bytes(lst)), .init("aggregation_uri", 7)]), "claims"),
            (.array([1, .bytes(lst)]), "claims"),
            (.map([.init("bits", 1), .init("lst", .bytes([0x78, 0x9c, 0x01]))]), "decompression"),
        ]
        for (shape, step) in shapes {
            #expect(listError { () throws(StatusListError) in _ = try StatusBits(cbor: shape.encoded()) }?.step == step, "\(shape)")
        }
        // Unknown keys are ignored, as the draft may add some.
        let extended = CBOR.map([.init("bits", 1), .init("lst", .bytes(lst)), .init("future", "x")]).encoded()
        #expect(try StatusBits(cbor: extended).status(at: 0) == 1)
    }
}
