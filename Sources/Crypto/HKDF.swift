/// HKDF (RFC 5869), built on `HMAC`: mdoc session keys and HPKE's key
/// schedule need separate extract and expand steps, and composing them from
/// HMAC avoids OpenSSL's per-call KDF fetch and parameter parsing.
public enum HKDF {
    /// PRK = HMAC-Hash(salt, IKM). An empty salt stands for HashLen zero bytes.
    public static func extract(_ hash: HashAlgorithm, salt: [UInt8], inputKeyMaterial: [UInt8]) -> [UInt8] {
        let effectiveSalt = salt.isEmpty ? [UInt8](repeating: 0, count: hash.byteCount) : salt
        return HMAC.authenticationCode(hash, key: effectiveSalt, data: inputKeyMaterial)
    }

    /// OKM = T(1) || T(2) || … truncated to `length`, at most 255 · HashLen bytes.
    public static func expand(_ hash: HashAlgorithm, pseudoRandomKey: [UInt8], info: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
        guard length >= 0, length <= 255 * hash.byteCount else {
            throw .invalidInput("HKDF output length must be 0…\(255 * hash.byteCount)")
        }
        guard pseudoRandomKey.count >= hash.byteCount else {
            throw .invalidInput("HKDF pseudorandom key must have at least \(hash.byteCount) bytes")
        }
        var output: [UInt8] = []
        output.reserveCapacity(length + hash.byteCount)
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = HMAC.authenticationCode(hash, key: pseudoRandomKey, data: block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(length))
    }

    public static func deriveKey(_ hash: HashAlgorithm, inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
        let prk = extract(hash, salt: salt, inputKeyMaterial: inputKeyMaterial)
        return try expand(hash, pseudoRandomKey: prk, info: info, length: length)
    }
}
