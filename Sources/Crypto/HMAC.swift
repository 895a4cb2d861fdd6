import COpenSSL

/// HMAC (RFC 2104) over the SHA-2 hashes, for COSE_Mac0 device MACs and HKDF.
///
/// Computed by the shim on OpenSSL's SHA-2 block functions with the keyed
/// state on the stack (cleansed afterwards): through EVP_MAC each MAC would
/// copy a template context and re-key three provider digest contexts, several
/// times the cost of the hashing itself for a short input.
public enum HMAC {
    public static func authenticationCode(_ hash: HashAlgorithm, key: [UInt8], data: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: hash.byteCount)
        let ok = key.withUnsafeBufferPointer { keyBytes in
            withContiguousBytes(data) { bytes, count in
                out.withUnsafeMutableBufferPointer { veridoc_hmac(hash.bits, keyBytes.baseAddress, keyBytes.count, bytes, count, $0.baseAddress) }
            }
        }
        // Only a broken library gets here; a wrong MAC must never be
        // returned as if it were right.
        guard ok == 1 else { fatalError("HMAC failed: \(lastOpenSSLError())") }
        return out
    }

    /// Constant-time comparison of `mac` with the expected code.
    public static func isValid(_ mac: [UInt8], _ hash: HashAlgorithm, key: [UInt8], data: some Collection<UInt8>) -> Bool {
        let expected = authenticationCode(hash, key: key, data: data)
        guard mac.count == expected.count else { return false }
        return CRYPTO_memcmp(mac, expected, expected.count) == 0
    }
}
