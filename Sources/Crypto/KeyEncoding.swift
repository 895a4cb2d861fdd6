import COpenSSL

extension PrivateKey {
    /// PKCS#8 `PRIVATE KEY` PEM, unencrypted, for writing key files.
    public func pkcs8PEM() throws(CryptoError) -> String {
        // The secure-heap BIO wipes its buffer on free, so the encoded key
        // does not linger in freed memory.
        let pem = try writePEM(method: BIO_s_secmem()) { bio in
            PEM_write_bio_PKCS8PrivateKey(bio, key.pointer, nil, nil, 0, nil, nil)
        }
        guard let pem else { throw .openSSL(lastOpenSSLError()) }
        return pem
    }
}

extension PublicKey {
    /// SubjectPublicKeyInfo `PUBLIC KEY` PEM.
    public var pem: String {
        // Encoding a key OpenSSL already holds only fails on allocation
        // failure; an empty string then mirrors `spki` returning no bytes.
        guard let evp = try? evpKey() else { return "" }
        let pem = try? writePEM(method: BIO_s_mem()) { bio in PEM_write_bio_PUBKEY(bio, evp.pointer) }
        return (pem ?? nil) ?? ""
    }
}

/// Runs `write` against a fresh memory BIO and returns what it wrote, or nil if it failed.
private func writePEM(method: OpaquePointer?, _ write: (OpaquePointer) -> Int32) throws(CryptoError) -> String? {
    guard let bio = BIO_new(method) else { throw .openSSL(lastOpenSSLError()) }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { return nil }
    let pending = Int(BIO_ctrl_pending(bio))
    var bytes = [UInt8](repeating: 0, count: pending)
    let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
    guard read == Int32(pending) else { return nil }
    defer { bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
    return String(decoding: bytes, as: UTF8.self)
}
