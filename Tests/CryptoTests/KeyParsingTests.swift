import Crypto
import Testing
import TestSupport

@Suite struct KeyParsingTests {
    static let generatorX = hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
    static let generatorY = hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")

    @Test func generatorIsAcceptedAndItsNeighbourIsNot() throws {
        let point = [0x04] + Self.generatorX + Self.generatorY
        #expect(try PublicKey(curve: .p256, uncompressedPoint: point).uncompressedPoint == point)
        var offCurve = point
        offCurve[64] &+= 1
        #expect(throws: CryptoError.pointNotOnCurve) { try PublicKey(curve: .p256, uncompressedPoint: offCurve) }
        var yPlusOne = Self.generatorY
        yPlusOne[31] &+= 1
        #expect(throws: CryptoError.pointNotOnCurve) { try PublicKey(curve: .p256, x: Self.generatorX, y: yPlusOne) }
    }

    /// (5, y) is on P-256; 5 + p fits in 32 bytes and names the same field
    /// element, so only a range check on the coordinate keeps a second
    /// encoding of the key from being accepted.
    @Test func coordinatesAtOrAboveTheFieldPrimeAreRejected() throws {
        let y = hex("459243b9aa581806fe913bce99817ade11ca503c64d9a3c533415c083248fbcc")
        let five = [UInt8](repeating: 0, count: 31) + [5]
        _ = try PublicKey(curve: .p256, x: five, y: y)
        let fivePlusP = hex("ffffffff00000001000000000000000000000001000000000000000000000004")
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, x: fivePlusP, y: y) }
    }

    @Test func pointAtInfinityEncodingsAreRejected() {
        // SEC 1 encodes infinity as the single byte 00; (0, 0) is its
        // affine stand-in in some libraries. Neither is a usable key.
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: [0x00]) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: [0x04] + [UInt8](repeating: 0, count: 64)) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: [0x00] + [UInt8](repeating: 0, count: 64)) }
    }

    @Test func malformedPointsAreRejected() {
        let point = [0x04] + Self.generatorX + Self.generatorY
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: []) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: Array(point.dropLast())) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p384, uncompressedPoint: point) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: [0x02] + Self.generatorX) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, uncompressedPoint: [0x04] + [UInt8](repeating: 0xff, count: 64)) }
    }

    @Test func scalarsOutOfRangeAreRejected() {
        #expect(throws: CryptoError.self) { try PrivateKey(curve: .p256, scalar: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.self) { try PrivateKey(curve: .p256, scalar: [UInt8](repeating: 0xff, count: 32)) }
        #expect(throws: CryptoError.self) { try PrivateKey(curve: .p256, scalar: [1]) }
    }
}
