/// What RFC 8032 leaves to the verifier and OpenSSL does not refuse: public
/// keys and signature points of small order, and a non-canonical S. A public
/// key of small order (the identity among them) makes some signature valid
/// over every message, so a document bound to such a device key would replay
/// into any session; such keys and signatures are refused before OpenSSL
/// verifies anything.
enum Ed25519Checks {
    /// The encodings (y, little-endian, sign bit ignored) of the eight points of
    /// order dividing 8, non-canonical ones (y ≥ p) included: 0, 1, p − 1, p,
    /// p + 1 and the two y-coordinates of the points of order 8.
    private static let smallOrderEncodings: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [0x01] + [UInt8](repeating: 0, count: 31),
        [0xec] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
        [0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
        [0xee] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
        hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
        hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
    ]

    /// The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian.
    private static let order: [UInt8] = hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")

    /// Whether a 32-byte point encoding is one of a point of small order.
    static func isSmallOrder(_ encoding: [UInt8]) -> Bool {
        guard encoding.count == 32 else { return false }
        return smallOrderEncodings.contains { candidate in
            (0..<31).allSatisfy { encoding[$0] == candidate[$0] } && encoding[31] & 0x7f == candidate[31]
        }
    }

    /// Whether a 64-byte signature R ‖ S has S < L and R of more than small order.
    static func isAcceptableSignature(_ signature: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        return isCanonicalScalar(Array(signature[32...])) && !isSmallOrder(Array(signature[..<32]))
    }

    /// S < L, compared from the most significant byte.
    static func isCanonicalScalar(_ scalar: [UInt8]) -> Bool {
        guard scalar.count == 32 else { return false }
        for index in stride(from: 31, through: 0, by: -1) where scalar[index] != order[index] {
            return scalar[index] < order[index]
        }
        return false
    }

    private static func hex(_ text: StaticString) -> [UInt8] {
        let digits = Array(text.description.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
