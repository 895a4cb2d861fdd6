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

    /// ECDH with a peer key used once, given as `04 ‖ X ‖ Y` (HPKE's
    /// encapsulated key): the same checks and errors as
    /// `PublicKey(curve:uncompressedPoint:)` followed by `sharedSecret(with:)`,
    /// without building a key object (and a copy of the curve's group) for it.
    func sharedSecret(withUncompressedPoint point: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard case .ec(let curve) = type else { throw .unsupported("key agreement needs an EC key") }
        try PublicKey.checkUncompressedForm(point, curve: curve)
        let width = curve.coordinateByteCount
        guard let pair = publicKey.ec else { throw .openSSL("ECDH failed") }
        var secret = [UInt8](repeating: 0, count: width)
        let written = point.withUnsafeBufferPointer { peer in
            secret.withUnsafeMutableBufferPointer {
                veridoc_ecdh_with_point($0.baseAddress, $0.count, peer.baseAddress, peer.count, pair.pointer)
            }
        }
        guard written == Int32(width) else {
            ERR_clear_error()
            // 04‖X‖Y cannot encode infinity, and the cofactor of P-256/384/521
            // is 1, so a point on the curve is in the group.
            if written == -2 { throw .pointNotOnCurve }
            throw .openSSL("ECDH failed")
        }
        return secret
    }
}
