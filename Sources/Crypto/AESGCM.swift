import COpenSSL

/// AES-GCM with a 96-bit nonce and a 128-bit tag: mdoc session encryption
/// (AES-256) and the HPKE AEAD (AES-128).
public enum AESGCM {
    static let tagByteCount = 16
    static let nonceByteCount = 12

    /// Returns ciphertext || 16-byte tag.
    public static func seal(_ plaintext: some Collection<UInt8>, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        let cipher = try cipher(key: key, nonce: nonce)
        guard let context = EVP_CIPHER_CTX_new() else { throw .openSSL(lastOpenSSLError()) }
        defer { EVP_CIPHER_CTX_free(context) }
        let result: Result<[UInt8], CryptoError> = withContiguousBytes(plaintext) { input, count in
            guard count <= Int(Int32.max) - tagByteCount else { return .failure(.invalidInput("plaintext too long")) }
            var out = [UInt8](repeating: 0, count: count + tagByteCount)
            let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
                let base = buffer.baseAddress!
                var length: Int32 = 0
                guard EVP_EncryptInit_ex2(context, cipher, key, nonce, nil) == 1,
                      addAAD(aad, to: context, encrypting: true),
                      count == 0 || EVP_EncryptUpdate(context, base, &length, input, Int32(count)) == 1,
                      EVP_EncryptFinal_ex(context, base + Int(length), &length) == 1,
                      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagByteCount), base + count) == 1
                else { return false }
                return true
            }
            return ok ? .success(out) : .failure(.openSSL(lastOpenSSLError()))
        }
        return try result.get()
    }

    /// Splits off the trailing 16-byte tag, checks it and returns the plaintext.
    /// Any mismatch, including an input shorter than the tag, is `.authenticationFailed`.
    public static func open(_ ciphertextAndTag: some Collection<UInt8>, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        let cipher = try cipher(key: key, nonce: nonce)
        guard let context = EVP_CIPHER_CTX_new() else { throw .openSSL(lastOpenSSLError()) }
        defer { EVP_CIPHER_CTX_free(context) }
        let result: Result<[UInt8], CryptoError> = withContiguousBytes(ciphertextAndTag) { input, total in
            guard total >= tagByteCount else { return .failure(.authenticationFailed) }
            guard total <= Int(Int32.max) else { return .failure(.invalidInput("ciphertext too long")) }
            let count = total - tagByteCount
            // The tag ctrl takes a mutable pointer but only reads it.
            let tag = UnsafeMutableRawPointer(mutating: input + count)
            var out = [UInt8](repeating: 0, count: count)
            let prepared = out.withUnsafeMutableBufferPointer { buffer -> Bool in
                var length: Int32 = 0
                return EVP_DecryptInit_ex2(context, cipher, key, nonce, nil) == 1
                    && addAAD(aad, to: context, encrypting: false)
                    && (count == 0 || EVP_DecryptUpdate(context, buffer.baseAddress, &length, input, Int32(count)) == 1)
                    && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagByteCount), tag) == 1
            }
            guard prepared else { return .failure(.openSSL(lastOpenSSLError())) }
            var finalLength: Int32 = 0
            var scratch = [UInt8](repeating: 0, count: tagByteCount)
            guard EVP_DecryptFinal_ex(context, &scratch, &finalLength) == 1 else {
                ERR_clear_error()
                // Release nothing unauthenticated to the caller.
                out.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
                return .failure(.authenticationFailed)
            }
            return .success(out)
        }
        return try result.get()
    }

    private static func cipher(key: [UInt8], nonce: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard nonce.count == nonceByteCount else { throw .invalidInput("AES-GCM nonce must have 12 bytes") }
        switch key.count {
        case 16: return Algorithms.aes128GCM.pointer
        case 32: return Algorithms.aes256GCM.pointer
        default: throw .invalidKey("AES-GCM key must have 16 or 32 bytes")
        }
    }

    private static func addAAD(_ aad: [UInt8], to context: OpaquePointer, encrypting: Bool) -> Bool {
        guard !aad.isEmpty else { return true }
        guard aad.count <= Int(Int32.max) else { return false }
        var ignored: Int32 = 0
        return encrypting
            ? EVP_EncryptUpdate(context, nil, &ignored, aad, Int32(aad.count)) == 1
            : EVP_DecryptUpdate(context, nil, &ignored, aad, Int32(aad.count)) == 1
    }
}
