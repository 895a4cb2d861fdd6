import COpenSSL

/// A P-256 public key Q with OpenSSL's fixed-base table for Q, so that ECDSA
/// verification's u2·Q costs what u1·G costs.
///
/// OpenSSL verifies with R = u1·G + u2·Q, where G has a built-in table and Q
/// is a full variable-base multiplication, most of a verify. The table lives
/// in a copy of the P-256 group whose generator is Q: OpenSSL 3.0's P-256
/// method (ecp_nistz256, x86-64 and aarch64) builds a comb table for any
/// generator (`EC_GROUP_precompute_mult`: 37 rows × 64 affine points) and
/// uses it for the generator slot of `EC_POINT_mul` after checking that the
/// table's first point is the group's generator. The generic wNAF tables of
/// an explicit-parameters group are no use here: OpenSSL multiplies a lone
/// generator scalar there with its constant-time ladder, ignoring the table.
///
/// The verification equation is written out below rather than left to
/// `ECDSA_do_verify`, which cannot take a second table. It follows OpenSSL's
/// (ossl_ecdsa_simple_verify_sig) step for step except the last, which
/// compares x in Jacobian coordinates; the differential tests and the
/// `fixed-base` fuzz target hold it to OpenSSL's answers.
///
/// Sendable: after `init` the group and its table are only read. OpenSSL takes
/// them through `const EC_GROUP *` in `EC_POINT_new`, `EC_POINT_mul` and
/// `EC_GROUP_get0_order`, and the P-256 multiplication reads the table without
/// touching its reference count or any other field; every call makes its own
/// `BN_CTX` and points. (openssl-threads(7): objects used through functions
/// that do not modify them may be shared; `const` alone is no promise, hence
/// the reading of ecp_nistz256_points_mul.)
public final class PrecomputedVerificationKey: @unchecked Sendable {
    /// SHA-256 of the key's `04 ‖ X ‖ Y`.
    public let fingerprint: [UInt8]
    /// The P-256 copy whose generator is Q, with Q's table. Owned; freed in deinit.
    private let group: OpaquePointer

    /// Memory held by one instance, to count in the RSS budget: the table is
    /// one allocation of 37 · 64 points of 64 bytes plus 64 for alignment
    /// (151,616 bytes; glibc maps it as 38 pages), the group copy about 1.6 KB
    /// (glibc's mallinfo2 around builds: 157,216 bytes).
    public static let approximateByteCount = 157_216

    /// Builds Q's table: as much CPU as several hundred verifications, so
    /// only for keys that will verify far more (`SignatureVerifierCache`).
    public init(_ key: PublicKey) throws(CryptoError) {
        guard key.curve == .p256, let point = key.uncompressedPoint else {
            throw .unsupported("fixed-base verification is for P-256 keys")
        }
        group = try Self.makeGroup(generator: point)
        fingerprint = HashAlgorithm.sha256.hash(point)
    }

    deinit {
        EC_GROUP_free(group)
    }

    /// A copy of P-256 with `point` as its generator (order n, cofactor 1) and
    /// the table built; the copy is freed here on any failure.
    private static func makeGroup(generator point: [UInt8]) throws(CryptoError) -> OpaquePointer {
        defer { clearOpenSSLErrors() }
        guard let standard = ECGroup.shared(.p256), let context = BN_CTX_new() else { throw .openSSL(lastOpenSSLError()) }
        defer { BN_CTX_free(context) }
        guard let q = EC_POINT_new(standard.pointer) else { throw .openSSL(lastOpenSSLError()) }
        defer { EC_POINT_free(q) }
        // Decoding rejects coordinates ≥ p and points off the curve; 04 ‖ X ‖ Y
        // cannot encode infinity, and P-256's cofactor is 1, so Q has order n.
        guard point.count == 65, point[0] == 0x04,
              EC_POINT_oct2point(standard.pointer, q, point, point.count, context) == 1
        else { throw .pointNotOnCurve }
        guard let copy = EC_GROUP_dup(standard.pointer) else { throw .openSSL(lastOpenSSLError()) }
        guard EC_GROUP_set_generator(copy, q, EC_GROUP_get0_order(standard.pointer), BN_value_one()) == 1 else {
            EC_GROUP_free(copy)
            throw .openSSL(lastOpenSSLError())
        }
        // A group whose generator is not G must not pass for the named curve.
        EC_GROUP_set_curve_name(copy, NID_undef)
        guard veridoc_ec_group_precompute_mult(copy, context) == 1 else {
            EC_GROUP_free(copy)
            throw .unsupported("this OpenSSL keeps no table for a P-256 generator other than G")
        }
        return copy
    }

    /// ECDSA over a digest the caller computed, with the COSE signature r ‖ s
    /// (32 bytes each). Exactly `ECDSA_do_verify`'s answer; malformed
    /// signatures are simply invalid.
    public func isValidSignature(_ signature: [UInt8], digest: [UInt8]) -> Bool {
        defer { clearOpenSSLErrors() }
        guard signature.count == 64, let standard = ECGroup.shared(.p256)?.pointer,
              let context = BN_CTX_new()
        else { return false }
        defer { BN_CTX_free(context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        guard let r = BN_CTX_get(context), let s = BN_CTX_get(context), let e = BN_CTX_get(context),
              let w = BN_CTX_get(context), let u1 = BN_CTX_get(context), let u2 = BN_CTX_get(context),
              let order = EC_GROUP_get0_order(standard)
        else { return false }

        let parsed = signature.withUnsafeBufferPointer { raw in
            BN_bin2bn(raw.baseAddress, 32, r) != nil && BN_bin2bn(raw.baseAddress! + 32, 32, s) != nil
        }
        // 1 ≤ r, s ≤ n − 1 (SEC 1 §4.1.4 step 1); BN_bin2bn never yields a negative.
        guard parsed, BN_is_zero(r) == 0, BN_cmp(r, order) < 0, BN_is_zero(s) == 0, BN_cmp(s, order) < 0 else {
            return false
        }
        // e: the digest's leftmost 256 bits, the length of n (SEC 1 §4.1.3
        // step 5). Whole bytes suffice, as n's length is a multiple of eight; a
        // shorter digest is taken whole.
        let eParsed = withContiguousBytes(digest) { bytes, count in BN_bin2bn(bytes, Int32(min(count, 32)), e) != nil }
        // w = s⁻¹, u1 = e·w, u2 = r·w (mod n). n is prime and 0 < s < n, so w exists.
        guard eParsed, BN_mod_inverse(w, s, order, context) != nil,
              BN_mod_mul(u1, e, w, order, context) == 1, BN_mod_mul(u2, r, w, order, context) == 1
        else { return false }

        // R = u1·G (the built-in table) + u2·Q (this key's table). Points of
        // either group share the field and its representation, so the sum is
        // taken on the standard group.
        guard let sum = EC_POINT_new(standard) else { return false }
        defer { EC_POINT_free(sum) }
        guard let partial = EC_POINT_new(group) else { return false }
        defer { EC_POINT_free(partial) }
        guard EC_POINT_mul(standard, sum, u1, nil, nil, context) == 1,
              EC_POINT_mul(group, partial, u2, nil, nil, context) == 1,
              EC_POINT_add(standard, sum, sum, partial, context) == 1
        else { return false }
        // R = O has no x; OpenSSL fails there (-1), which is no valid signature.
        guard EC_POINT_is_at_infinity(standard, sum) == 0 else { return false }
        return Self.xCoordinate(of: sum, reducesTo: r, on: standard, context)
    }

    /// Whether R.x mod n = r, for R ≠ O. R.x lies in [0, p), so that holds
    /// exactly when R.x = r, or R.x = r + n where r + n < p. The first is
    /// X = r·Z² (mod p) in R's Jacobian coordinates: no field inversion, which
    /// the affine x costs (a third of the rest of this verify). The second is
    /// possible only for r below p − n ≈ 2¹²⁸, which a signer's r is with
    /// probability about 2⁻¹²⁸; there the affine x decides, as OpenSSL does.
    private static func xCoordinate(of point: OpaquePointer, reducesTo r: OpaquePointer, on group: OpaquePointer,
                                    _ context: OpaquePointer) -> Bool {
        guard let x = BN_CTX_get(context), let z = BN_CTX_get(context), let product = BN_CTX_get(context),
              let p = EC_GROUP_get0_field(group), let order = EC_GROUP_get0_order(group),
              veridoc_ec_point_jacobian(group, point, x, nil, z, context) == 1,
              BN_mod_sqr(product, z, p, context) == 1, BN_mod_mul(product, product, r, p, context) == 1
        else { return false }
        // Both sides reduced mod p: the decoded X is, and `product` is a residue.
        if BN_nnmod(x, x, p, context) == 1, BN_cmp(product, x) == 0 { return true }
        guard BN_add(product, r, order) == 1, BN_cmp(product, p) < 0 else { return false }
        return EC_POINT_get_affine_coordinates(group, point, x, nil, context) == 1
            && BN_nnmod(x, x, order, context) == 1 && BN_cmp(x, r) == 0
    }

    /// Hashes `data` with `hash`, then as `isValidSignature(_:digest:)`:
    /// the shape of `PublicKey.isValidSignature(_:for:hash:)`.
    public func isValidSignature(_ signature: [UInt8], for data: some Collection<UInt8>, hash: HashAlgorithm) -> Bool {
        isValidSignature(signature, digest: hash.hash(data))
    }
}
