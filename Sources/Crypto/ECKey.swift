import COpenSSL

/// Owns one OpenSSL `EC_KEY`: the form in which EC keys verify signatures
/// and agree secrets (see the note in COpenSSL's shim.h on why not EVP).
///
/// Sendable: ECDSA verification and ECDH only read the key (each call makes
/// its own `BN_CTX` and points), and nothing here mutates it after init.
final class OwnedECKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        veridoc_ec_key_free(pointer)
    }

    /// A public key from `04 ‖ X ‖ Y`; nil unless it is a point of the curve's group.
    static func publicKey(curve: Curve, uncompressedPoint point: [UInt8]) -> OwnedECKey? {
        guard let group = ECGroup.shared(curve),
              let key = point.withUnsafeBufferPointer({ veridoc_ec_key_from_point(group.pointer, $0.baseAddress, $0.count) })
        else {
            ERR_clear_error()
            return nil
        }
        return OwnedECKey(taking: key)
    }

    /// The EC_KEY of an EC `EVP_PKEY` (a private key keeps its scalar).
    static func from(_ pkey: OwnedPKey) -> OwnedECKey? {
        guard let key = veridoc_ec_key_from_pkey(pkey.pointer) else {
            ERR_clear_error()
            return nil
        }
        return OwnedECKey(taking: key)
    }

    /// ECDSA over `digest` with the COSE signature r ‖ s (each `width` bytes).
    func isValidSignature(_ signature: [UInt8], digest: [UInt8], width: Int) -> Bool {
        guard signature.count == 2 * width, width <= Int(Int32.max) else { return false }
        let result = signature.withUnsafeBufferPointer { raw in
            veridoc_ecdsa_verify(digest, Int32(digest.count), raw.baseAddress, raw.baseAddress! + width, Int32(width), pointer)
        }
        clearOpenSSLErrors()
        return result == 1
    }

    /// The x coordinate of this (private) key times `peer`'s point.
    func sharedSecret(with peer: OwnedECKey, width: Int) -> [UInt8]? {
        var secret = [UInt8](repeating: 0, count: width)
        let written = secret.withUnsafeMutableBufferPointer { veridoc_ecdh($0.baseAddress, $0.count, peer.pointer, pointer) }
        guard written == Int32(width) else {
            ERR_clear_error()
            return nil
        }
        return secret
    }
}

/// One `EC_GROUP` per curve, shared read-only by every key made from a point
/// (`EC_KEY_set_group` copies it). Process-wide constants, never freed.
final class ECGroup: @unchecked Sendable {
    let pointer: OpaquePointer

    private init?(curve: Curve) {
        guard let group = EC_GROUP_new_by_curve_name(curve.nid) else { return nil }
        pointer = group
    }

    private static let all = PerCurve { ECGroup(curve: $0) }

    static func shared(_ curve: Curve) -> ECGroup? { all[curve] }
}
