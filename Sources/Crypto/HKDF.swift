import COpenSSL

/// HKDF (RFC 5869): mdoc session keys and HPKE's key schedule need separate
/// extract and expand steps. Extract is one HMAC; expand keys HMAC with the
/// PRK once for all its blocks (in the shim, on the stack, cleansed), so
/// neither goes through OpenSSL's per-call KDF fetch and parameter parsing.
public enum HKDF {
    /// PRK = HMAC-Hash(salt, IKM). An empty salt stands for HashLen zero bytes.
    public static func extract(_ hash: HashAlgorithm, salt: [UInt8], inputKeyMaterial: [UInt8]) -> [UInt8] {
        // HMAC pads a short key with zeros to the block length, so an empty
        // key and HashLen zero bytes are the same key (RFC 2104 §2).
        HMAC.authenticationCode(hash, key: salt, data: inputKeyMaterial)
    }

    /// OKM = T(1) || T(2) || … truncated to `length`, at most 255 · HashLen bytes.
    public static func expand(_ hash: HashAlgorithm, pseudoRandomKey: [UInt8], info: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
        guard length >= 0, length <= 255 * hash.byteCount else {
            throw .invalidInput("HKDF output length must be 0…\(255 * hash.byteCount)")
        }
        guard pseudoRandomKey.count >= hash.byteCount else {
            throw .invalidInput("HKDF pseudorandom key must have at least \(hash.byteCount) bytes")
        }
        var output = [UInt8](repeating: 0, count: length)
        let ok = pseudoRandomKey.withUnsafeBufferPointer { prk in
            withContiguousBytes(info) { infoBytes, infoCount in
                output.withUnsafeMutableBufferPointer {
                    veridoc_hkdf_expand(hash.bits, prk.baseAddress, prk.count, infoBytes, infoCount, $0.baseAddress, $0.count)
                }
            }
        }
        guard ok == 1 else { fatalError("HKDF-Expand failed: \(lastOpenSSLError())") }
        return output
    }

    public static func deriveKey(_ hash: HashAlgorithm, inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
        let prk = extract(hash, salt: salt, inputKeyMaterial: inputKeyMaterial)
        return try expand(hash, pseudoRandomKey: prk, info: info, length: length)
    }
}
