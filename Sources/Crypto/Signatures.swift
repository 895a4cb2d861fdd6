import COpenSSL

extension PublicKey {
    /// Verifies a COSE signature: r ‖ s (each exactly one coordinate long) for
    /// EC keys, the 64-byte signature for Ed25519 (where `hash` is ignored,
    /// because EdDSA fixes its own hash). Malformed signatures are simply invalid.
    public func isValidSignature(_ signature: [UInt8], for data: some Collection<UInt8>, hash: HashAlgorithm) -> Bool {
        defer { clearOpenSSLErrors() }
        switch type {
        case .ec(let curve):
            guard let ec else { return false }
            return ec.isValidSignature(signature, digest: hash.hash(data), width: curve.coordinateByteCount)
        case .ed25519:
            guard Ed25519Checks.isAcceptableSignature(signature), let evp = try? evpKey() else { return false }
            return digestVerify(signature: signature, data: data, key: evp)
        }
    }

    /// ECDSA over a digest the caller computed, with the COSE signature r ‖ s:
    /// `ECDSA_do_verify`, the answer a fixed-base verifier must give
    /// (`PrecomputedVerificationKey`). False for Ed25519 keys, which sign the
    /// message itself.
    public func isValidSignature(_ signature: [UInt8], digest: [UInt8]) -> Bool {
        guard let curve, let ec else { return false }
        defer { clearOpenSSLErrors() }
        return ec.isValidSignature(signature, digest: digest, width: curve.coordinateByteCount)
    }

    /// EdDSA: one-shot, with no separate digest.
    private func digestVerify(signature: [UInt8], data: some Collection<UInt8>, key: OwnedPKey) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key.pointer) == 1 else { return false }
        return withContiguousBytes(data) { bytes, count in
            EVP_DigestVerify(context, signature, signature.count, bytes, count) == 1
        }
    }
}

extension PrivateKey {
    /// Signs `data` and returns the COSE form: r ‖ s left-padded to the
    /// coordinate length for EC keys, the 64-byte signature for Ed25519.
    public func signature(for data: some Collection<UInt8>, hash: HashAlgorithm) throws(CryptoError) -> [UInt8] {
        switch type {
        case .ec(let curve):
            let der = try digestSign(data: data, digest: hash.evpMD)
            return try rawSignature(fromDER: der, coordinateByteCount: curve.coordinateByteCount)
        case .ed25519:
            return try digestSign(data: data, digest: nil)
        }
    }

    private func digestSign(data: some Collection<UInt8>, digest: OpaquePointer?) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .openSSL(lastOpenSSLError()) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, digest, nil, key.pointer) == 1 else { throw .openSSL(lastOpenSSLError()) }
        let signature: [UInt8]? = withContiguousBytes(data) { bytes, count in
            // One-shot signing is the only form Ed25519 supports, so ECDSA
            // uses it too: first call sizes the buffer, second call signs.
            var length = 0
            guard EVP_DigestSign(context, nil, &length, bytes, count) == 1 else { return nil }
            var out = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &out, &length, bytes, count) == 1 else { return nil }
            return Array(out.prefix(length))
        }
        guard let signature else { throw .openSSL(lastOpenSSLError()) }
        return signature
    }
}

/// DER `ECDSA-Sig-Value` → COSE r ‖ s, each left-padded to `width` bytes.
private func rawSignature(fromDER der: [UInt8], coordinateByteCount width: Int) throws(CryptoError) -> [UInt8] {
    let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
        var cursor = buffer.baseAddress
        return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
    }
    guard let parsed else { throw .openSSL(lastOpenSSLError()) }
    defer { ECDSA_SIG_free(parsed) }
    var out = [UInt8](repeating: 0, count: 2 * width)
    let ok = out.withUnsafeMutableBufferPointer { buffer in
        BN_bn2binpad(ECDSA_SIG_get0_r(parsed), buffer.baseAddress, Int32(width)) == Int32(width)
            && BN_bn2binpad(ECDSA_SIG_get0_s(parsed), buffer.baseAddress! + width, Int32(width)) == Int32(width)
    }
    guard ok else { throw .openSSL("ECDSA signature does not fit the curve") }
    return out
}
