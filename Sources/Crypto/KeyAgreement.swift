import COpenSSL

extension PrivateKey {
    /// ECDH: the X coordinate of d · Q, left-padded to the coordinate length
    /// (the form ISO 18013-5 and RFC 9180 feed into HKDF).
    public func sharedSecret(with peer: PublicKey) throws(CryptoError) -> [UInt8] {
        guard case .ec(let curve) = type else { throw .unsupported("key agreement needs an EC key") }
        guard peer.type == type else { throw .invalidKey("peer key is not on \(curve.rawValue)") }
        // Every PublicKey was checked on construction (on the curve, not at
        // infinity), so the peer is not validated a second time here.
        // The public half's EC_KEY was taken from the private EVP_PKEY, so it holds the scalar.
        guard let pair = publicKey.ec, let peerKey = peer.ec,
              let secret = pair.sharedSecret(with: peerKey, width: curve.coordinateByteCount)
        else { throw .openSSL("ECDH failed") }
        return secret
    }
}
