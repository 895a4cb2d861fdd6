import COpenSSL

/// HMAC (RFC 2104) over the SHA-2 hashes, for COSE_Mac0 device MACs and HKDF.
public enum HMAC {
    public static func authenticationCode(_ hash: HashAlgorithm, key: [UInt8], data: some Collection<UInt8>) -> [UInt8] {
        // A copy of a context that already names its digest: setting the digest
        // by name on every call fetched it from the provider store each time.
        guard let context = EVP_MAC_CTX_dup(MACTemplate.shared(hash).pointer) else {
            fatalError("OpenSSL HMAC unavailable: \(lastOpenSSLError())")
        }
        defer { EVP_MAC_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: hash.byteCount)
        var written = 0
        let ok: Bool = withContiguousBytes(key) { keyBytes, keyCount in
            // A non-NULL key pointer is required even for an empty key:
            // with NULL, OpenSSL reuses the previous key, and there is none.
            guard EVP_MAC_init(context, keyBytes, keyCount, nil) == 1 else { return false }
            let updated = withContiguousBytes(data) { bytes, count in EVP_MAC_update(context, bytes, count) }
            return updated == 1 && EVP_MAC_final(context, &out, &written, out.count) == 1
        }
        // Only allocation failure or a broken provider gets here; a wrong MAC
        // must never be returned as if it were right.
        guard ok, written == hash.byteCount else { fatalError("HMAC failed: \(lastOpenSSLError())") }
        return out
    }

    /// Constant-time comparison of `mac` with the expected code.
    public static func isValid(_ mac: [UInt8], _ hash: HashAlgorithm, key: [UInt8], data: some Collection<UInt8>) -> Bool {
        let expected = authenticationCode(hash, key: key, data: data)
        guard mac.count == expected.count else { return false }
        return CRYPTO_memcmp(mac, expected, expected.count) == 0
    }
}

/// An HMAC context with its digest set and no key, copied for each MAC.
/// Only ever read after construction (`EVP_MAC_CTX_dup` does not modify its
/// source), so one per hash is shared by all threads; process-wide, never freed.
private final class MACTemplate: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(_ hash: HashAlgorithm) {
        guard let mac = Algorithms.hmac, let context = EVP_MAC_CTX_new(mac.pointer) else {
            fatalError("OpenSSL HMAC unavailable: \(lastOpenSSLError())")
        }
        // The digest name belongs to the fetched EVP_MD, so it outlives the
        // parameter array that borrows it.
        var params = [
            OSSL_PARAM_construct_utf8_string(veridoc_param_mac_digest(), UnsafeMutablePointer(mutating: EVP_MD_get0_name(hash.evpMD)), 0),
            OSSL_PARAM_construct_end(),
        ]
        guard EVP_MAC_CTX_set_params(context, &params) == 1 else { fatalError("HMAC digest \(hash.rawValue): \(lastOpenSSLError())") }
        pointer = context
    }

    private static let sha256 = MACTemplate(.sha256)
    private static let sha384 = MACTemplate(.sha384)
    private static let sha512 = MACTemplate(.sha512)

    static func shared(_ hash: HashAlgorithm) -> MACTemplate {
        switch hash {
        case .sha256: sha256
        case .sha384: sha384
        case .sha512: sha512
        }
    }
}
