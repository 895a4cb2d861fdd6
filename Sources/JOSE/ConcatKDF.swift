import Crypto

/// The single-step key derivation of NIST SP 800-56A §5.8.1 with SHA-256,
/// as JWA uses it for ECDH-ES (RFC 7518 §4.6.2): `OtherInfo` is the
/// algorithm id, PartyUInfo and PartyVInfo each behind a 32-bit big-endian
/// length, then the key length in bits.
enum ConcatKDF {
    /// One round: the keys JWE derives here (128 and 256 bits) fit in one SHA-256 output.
    static func derive(sharedSecret: [UInt8], algorithmID: String, partyUInfo: [UInt8], partyVInfo: [UInt8], keyByteCount: Int) -> [UInt8] {
        precondition((1...32).contains(keyByteCount), "one SHA-256 round derives at most 32 bytes")
        var input: [UInt8] = [0, 0, 0, 1]
        input += sharedSecret
        for field in [Array(algorithmID.utf8), partyUInfo, partyVInfo] {
            input += bigEndian(UInt32(field.count))
            input += field
        }
        input += bigEndian(UInt32(keyByteCount * 8))
        return Array(sha256(input).prefix(keyByteCount))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }
}
