import COpenSSL

extension PrivateKey {
    /// ECDH: the X coordinate of d · Q, left-padded to the coordinate length
    /// (the form ISO 18013-5 and RFC 9180 feed into HKDF).
    public func sharedSecret(with peer: PublicKey) throws(CryptoError) -> [UInt8] {
        guard case .ec(let curve) = type else { throw .unsupported("key agreement needs an EC key") }
        guard peer.type == type else { throw .invalidKey("peer key is not on \(curve.rawValue)") }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw .openSSL(lastOpenSSLError()) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1 else { throw .openSSL(lastOpenSSLError()) }
        // Every PublicKey was checked on construction (on the curve, not at
        // infinity), so the peer is not validated a second time here.
        guard EVP_PKEY_derive_set_peer_ex(context, peer.key.pointer, 0) == 1 else {
            ERR_clear_error()
            throw .pointNotOnCurve
        }
        var length = 0
        guard EVP_PKEY_derive(context, nil, &length) == 1 else { throw .openSSL(lastOpenSSLError()) }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(context, &secret, &length) == 1 else { throw .openSSL(lastOpenSSLError()) }
        guard length == curve.coordinateByteCount else { throw .openSSL("ECDH output has an unexpected length") }
        return secret
    }
}
