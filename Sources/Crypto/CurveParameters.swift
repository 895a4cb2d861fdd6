import COpenSSL

/// One parameters-only `EVP_PKEY` per curve, from which the EVP form of a
/// point-made public key is built when an encoding or a certificate needs
/// one (`PublicKey.evpKey()`); verification and ECDH use `EC_KEY` instead.
///
/// OpenSSL 3's `EVP_PKEY_fromdata` builds the curve's group from its name for
/// every key, a large fraction of an ECDSA verify per received key. A copy
/// of a parameters-only key (`EVP_PKEY_dup` copies the group) with the point
/// set on it is the same key for a fraction of that; libssl builds its peers'
/// key shares the same way. The shared keys are never modified, only copied,
/// and are intentionally never freed (process-wide constants).
final class CurveParameters: @unchecked Sendable {
    let pointer: OpaquePointer

    private init?(curve: Curve) {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        let params: UnsafeMutablePointer<OSSL_PARAM>? = curve.openSSLGroupName.withCString { group in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, veridoc_param_group_name(), group, 0) == 1 else { return nil }
            return OSSL_PARAM_BLD_to_param(builder)
        }
        guard let params else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &pkey, veridoc_selection_key_parameters(), params) == 1,
              let pkey
        else {
            ERR_clear_error()
            return nil
        }
        pointer = pkey
    }

    private static let all = PerCurve { CurveParameters(curve: $0) }

    static func shared(_ curve: Curve) -> CurveParameters? { all[curve] }
}

/// A value for each curve, made once for all of them: the process-wide
/// OpenSSL objects (`CurveParameters`, `ECGroup`) looked up per key.
struct PerCurve<Value: Sendable>: Sendable {
    private let p256: Value
    private let p384: Value
    private let p521: Value

    init(_ make: (Curve) -> Value) {
        p256 = make(.p256)
        p384 = make(.p384)
        p521 = make(.p521)
    }

    subscript(curve: Curve) -> Value {
        switch curve {
        case .p256: p256
        case .p384: p384
        case .p521: p521
        }
    }
}

/// An EC public key from its uncompressed point. OpenSSL decodes the point
/// and refuses one that is not on the curve; the fallback path, which builds
/// the key from its group name, also runs `checkPublicKey`.
func makeECPublicKey(curve: Curve, point: [UInt8]) throws(CryptoError) -> OwnedPKey {
    guard let parameters = CurveParameters.shared(curve) else {
        // Only if the provider cannot build a parameters-only key at all.
        let built = try makeECKey(curve: curve, publicPoint: point, privateScalar: nil)
        try checkPublicKey(built)
        return built
    }
    guard let copy = EVP_PKEY_dup(parameters.pointer) else { throw .openSSL(lastOpenSSLError()) }
    let owned = OwnedPKey(taking: copy)
    guard EVP_PKEY_set1_encoded_public_key(copy, point, point.count) == 1 else {
        ERR_clear_error()
        throw .pointNotOnCurve
    }
    return owned
}
