import COpenSSL

/// Crafted P-256 ECDSA inputs, for holding a verifier written out by hand
/// (`PrecomputedVerificationKey`) to OpenSSL's `ECDSA_do_verify`: the
/// differential tests and the `fixed-base` fuzz target share them. Several
/// need the private scalar d (R at infinity, u1·G = u2·Q), so they are made
/// here, beside the keys; a fixture, never used on received data.
public struct ECDSAEdgeCases: Sendable {
    public struct Case: Sendable {
        public let name: String
        public let digest: [UInt8]
        /// r ‖ s, 32 bytes each.
        public let signature: [UInt8]
        /// What any correct ECDSA verifier answers.
        public let isValid: Bool
    }

    private let scalar: [UInt8]
    public let publicKey: PublicKey

    /// `scalar`: d, 32 bytes big-endian, 1 ≤ d ≤ n − 1.
    public init(scalar: [UInt8]) throws(CryptoError) {
        publicKey = try PrivateKey(curve: .p256, scalar: scalar).publicKey
        self.scalar = scalar
    }

    /// The cases for `digest` (any length; its leftmost 32 bytes count) with
    /// the nonce k = `nonce` mod n (0 taken as 1). The ones built on a valid
    /// signature are left out in the negligible event that r or s is 0.
    public func cases(digest: [UInt8], nonce: [UInt8]) -> [Case] {
        guard let field = ScalarField() else { return [] }
        var out: [Case] = []
        func add(_ name: String, _ digest: [UInt8], _ r: BigNumber?, _ s: BigNumber?, valid: Bool) {
            guard let r = r?.bytes(32), let s = s?.bytes(32) else { return }
            out.append(Case(name: name, digest: digest, signature: r + s, isValid: valid))
        }
        let n = field.order
        let d = BigNumber(scalar)
        let e = BigNumber(Array(digest.prefix(32)))
        var k = field.reduce(BigNumber(nonce))
        if k.isZero { k = BigNumber([1]) }
        let r = field.reduce(field.x(times: k))
        let kInverse = field.inverse(k)
        // s = k⁻¹(e + r·d) for the digest whose value mod n is `value`.
        func sign(_ value: BigNumber) -> BigNumber { field.mul(kInverse, field.add(value, field.mul(r, d))) }
        let s = sign(e)
        let one = BigNumber([1])
        let top = BigNumber([UInt8](repeating: 0xff, count: 32))

        // Out of range: r or s zero, n, n + 1, 2²⁵⁶ − 1; r or s plus n.
        add("r = 0", digest, BigNumber([]), s, valid: false)
        add("s = 0", digest, r, BigNumber([]), valid: false)
        add("r = n", digest, n, s, valid: false)
        add("s = n", digest, r, n, valid: false)
        add("r = n + 1", digest, field.plain(n, plus: one), s, valid: false)
        add("s = n + 1", digest, r, field.plain(n, plus: one), valid: false)
        add("r = 2^256 - 1", digest, top, s, valid: false)
        add("s = 2^256 - 1", digest, r, top, valid: false)
        guard !r.isZero, !s.isZero else { return out }
        add("valid", digest, r, s, valid: true)
        // ECDSA verification accepts either s; low-S is a signer's convention.
        add("high-S (n - s)", digest, r, field.negate(s), valid: true)
        // Only when they fit in 32 bytes: for r or s below 2²⁵⁶ − n ≈ 2²²⁴, rarely.
        add("r + n", digest, field.plain(r, plus: n), s, valid: false)
        add("s + n", digest, r, field.plain(s, plus: n), valid: false)
        add("r and s swapped", digest, s, r, valid: false)
        add("r = s = 1", digest, one, one, valid: false)
        // One bit of e flipped (an empty digest, e = 0, becomes e = 1).
        var flipped = digest.isEmpty ? [0] : digest
        flipped[min(flipped.count, 32) - 1] ^= 1
        add("wrong digest", flipped, r, s, valid: false)
        // u1 = 0: e ≡ 0 (mod n) from a zero digest and from n itself; and e ≥ n.
        let zero = [UInt8](repeating: 0, count: 32)
        add("digest 0 (u1 = 0)", zero, r, sign(BigNumber([])), valid: true)
        if let orderBytes = n.bytes(32) { add("digest n (u1 = 0)", orderBytes, r, sign(BigNumber([])), valid: true) }
        add("digest 2^256 - 1", [UInt8](repeating: 0xff, count: 32), r, sign(field.reduce(top)), valid: true)
        // s + n fits in 32 bytes only for s below 2²⁵⁶ − n ≈ 2²²⁴, so the digest
        // is chosen for a small s: e = s·k − r·d signs with (r, s). s + n ≡ s
        // must still be refused: only the range check tells them apart.
        let smallS = field.plain(BigNumber(Array(nonce.suffix(24))), plus: one)
        if let smallDigest = field.add(field.mul(smallS, k), field.negate(field.mul(r, d))).bytes(32) {
            add("small s", smallDigest, r, smallS, valid: true)
            add("small s + n", smallDigest, r, field.plain(smallS, plus: n), valid: false)
        }
        // R = O: r = −e·d⁻¹ makes u1 + u2·d = w(e + r·d) ≡ 0, whatever s.
        let infinityR = field.negate(field.mul(e, field.inverse(d)))
        if !field.reduce(e).isZero { add("R at infinity", digest, infinityR, s, valid: false) }
        // u1·G = u2·Q, so the sum is a doubling: the digest e' = r·d gives
        // u1 = u2·d, and s' = k⁻¹(e' + r·d) keeps R = k·G.
        let doubled = field.mul(r, d)
        if let doubledDigest = doubled.bytes(32) {
            add("u1·G = u2·Q (doubling)", doubledDigest, r, sign(doubled), valid: true)
        }
        return out
    }
}

/// Owns one `BIGNUM`.
private final class BigNumber {
    let pointer: OpaquePointer

    init(_ bytes: [UInt8]) {
        guard let made = withContiguousBytes(bytes, { BN_bin2bn($0, Int32($1), nil) }) else { fatalError("BN_bin2bn failed") }
        pointer = made
    }

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        BN_free(pointer)
    }

    var isZero: Bool { BN_is_zero(pointer) == 1 }

    /// Big-endian, left-padded to `width`; nil if it does not fit.
    func bytes(_ width: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: width)
        guard BN_bn2binpad(pointer, &out, Int32(width)) == Int32(width) else { return nil }
        return out
    }
}

/// Arithmetic mod P-256's order n, and x(k·G). Fixture code: an OpenSSL
/// failure here is a broken build, so it stops.
private final class ScalarField {
    let context: OpaquePointer
    let order: BigNumber
    private let group: OpaquePointer

    init?() {
        guard let group = ECGroup.shared(.p256)?.pointer, let context = BN_CTX_new() else { return nil }
        guard let copy = BN_dup(EC_GROUP_get0_order(group)) else {
            BN_CTX_free(context)
            return nil
        }
        self.group = group
        self.context = context
        order = BigNumber(taking: copy)
    }

    deinit {
        BN_CTX_free(context)
    }

    private func result(_ body: (OpaquePointer) -> Int32) -> BigNumber {
        guard let made = BN_new() else { fatalError("BN_new failed") }
        let value = BigNumber(taking: made)
        guard body(made) == 1 else { fatalError("BIGNUM arithmetic failed: \(lastOpenSSLError())") }
        return value
    }

    func reduce(_ a: BigNumber) -> BigNumber { result { BN_nnmod($0, a.pointer, order.pointer, context) } }
    func add(_ a: BigNumber, _ b: BigNumber) -> BigNumber { result { BN_mod_add($0, a.pointer, b.pointer, order.pointer, context) } }
    func mul(_ a: BigNumber, _ b: BigNumber) -> BigNumber { result { BN_mod_mul($0, a.pointer, b.pointer, order.pointer, context) } }
    func negate(_ a: BigNumber) -> BigNumber { result { BN_mod_sub($0, order.pointer, a.pointer, order.pointer, context) } }
    func inverse(_ a: BigNumber) -> BigNumber { result { BN_mod_inverse($0, a.pointer, order.pointer, context) == nil ? 0 : 1 } }
    /// a + b without reduction.
    func plain(_ a: BigNumber, plus b: BigNumber) -> BigNumber { result { BN_add($0, a.pointer, b.pointer) } }

    /// The x coordinate of k·G (not reduced).
    func x(times k: BigNumber) -> BigNumber {
        guard let point = EC_POINT_new(group) else { fatalError("EC_POINT_new failed") }
        defer { EC_POINT_free(point) }
        return result { x in
            EC_POINT_mul(group, point, k.pointer, nil, nil, context) == 1
                ? EC_POINT_get_affine_coordinates(group, point, x, nil, context) : 0
        }
    }
}
