import COpenSSL

/// The elliptic curves Veridoc accepts, with the names OpenSSL and COSE give them.
public enum Curve: String, Sendable, CaseIterable {
    case p256 = "P-256"
    case p384 = "P-384"
    case p521 = "P-521"

    /// Bytes in one field element (the length of x, y and the private scalar).
    public var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    /// COSE `crv` value (RFC 9053 §7.1).
    public var coseIdentifier: Int {
        switch self {
        case .p256: 1
        case .p384: 2
        case .p521: 3
        }
    }

    public init?(coseIdentifier: Int) {
        guard let curve = Curve.allCases.first(where: { $0.coseIdentifier == coseIdentifier }) else { return nil }
        self = curve
    }

    var openSSLGroupName: String {
        switch self {
        case .p256: "prime256v1"
        case .p384: "secp384r1"
        case .p521: "secp521r1"
        }
    }

    var nid: Int32 {
        switch self {
        case .p256: NID_X9_62_prime256v1
        case .p384: NID_secp384r1
        case .p521: NID_secp521r1
        }
    }

    init?(openSSLGroupName name: String) {
        switch name {
        case "prime256v1", "P-256", "secp256r1": self = .p256
        case "secp384r1", "P-384": self = .p384
        case "secp521r1", "P-521": self = .p521
        default: return nil
        }
    }
}

/// What kind of public key an `EVP_PKEY` holds.
public enum KeyType: Equatable, Sendable {
    case ec(Curve)
    case ed25519
}

/// Owns one `EVP_PKEY` and frees it on deinit.
///
/// Sendable: an `EVP_PKEY` that is never mutated after construction may be used
/// from several threads at once (OpenSSL 3 documents key objects as safe for
/// concurrent read-only use), and no method here mutates it.
final class OwnedPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    var keyType: KeyType? {
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_EC:
            var buffer = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pointer, veridoc_param_group_name(), &buffer, buffer.count, &length) == 1
            else { return nil }
            let name = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return Curve(openSSLGroupName: name).map(KeyType.ec)
        case EVP_PKEY_ED25519:
            return .ed25519
        default:
            return nil
        }
    }
}

/// The OpenSSL objects behind one public key, in one reference: with two
/// references `PublicKey` grows to four words, and a `PrivateKey` returned by a
/// typed-throws function comes back partly uninitialised in debug builds
/// (Swift 6.3.1; release builds are fine).
final class KeyForms: Sendable {
    /// The EVP form; nil for EC keys made from a point, whose EVP form is
    /// built only when asked for (`evpKey()`: encodings, certificates).
    let evp: OwnedPKey?
    /// Every EC key's `EC_KEY` form.
    let ec: OwnedECKey?

    init(evp: OwnedPKey?, ec: OwnedECKey?) {
        self.evp = evp
        self.ec = ec
    }
}

/// A public key for signature verification or key agreement.
public struct PublicKey: Sendable {
    let forms: KeyForms
    public let type: KeyType

    /// `04 || X || Y` when known at construction (a point given to `init`, a
    /// private key's public half), so it is not exported from OpenSSL again.
    let knownPoint: [UInt8]?

    /// `ec` may be passed when the caller already has it (a private key's pair).
    init(owned: OwnedPKey, point: [UInt8]? = nil, ec: OwnedECKey? = nil) throws(CryptoError) {
        guard let type = owned.keyType else { throw .unsupported("key type") }
        if type == .ed25519 {
            // Every Ed25519 key, from a COSE_Key, a certificate or a file, passes here.
            var length = 32
            var raw = [UInt8](repeating: 0, count: 32)
            guard EVP_PKEY_get_raw_public_key(owned.pointer, &raw, &length) == 1, length == 32 else {
                throw .invalidKey("Ed25519 public key without its 32 bytes")
            }
            guard !Ed25519Checks.isSmallOrder(raw) else { throw .invalidKey("Ed25519 public key of small order") }
        }
        var ecForm: OwnedECKey?
        if case .ec = type {
            ecForm = ec ?? OwnedECKey.from(owned)
            guard ecForm != nil else { throw .unsupported("EC key without an EC_KEY form") }
        }
        self.forms = KeyForms(evp: owned, ec: ecForm)
        self.type = type
        self.knownPoint = point
    }

    /// An EC public key from its uncompressed SEC 1 encoding `04 || X || Y`.
    /// Points off the curve and the point at infinity are rejected.
    public init(curve: Curve, uncompressedPoint point: [UInt8]) throws(CryptoError) {
        try Self.checkUncompressedForm(point, curve: curve)
        // Decoding the point (EC_POINT_oct2point) rejects coordinates ≥ p and
        // points off the curve, and 04‖X‖Y cannot encode infinity. The cofactor
        // of P-256/384/521 is 1, so a point on the curve is in the group.
        guard let ec = OwnedECKey.publicKey(curve: curve, uncompressedPoint: point) else { throw .pointNotOnCurve }
        self.forms = KeyForms(evp: nil, ec: ec)
        self.type = .ec(curve)
        self.knownPoint = point
    }

    /// `04 ‖ X ‖ Y` at the curve's width: the form every point we decode must have.
    static func checkUncompressedForm(_ point: [UInt8], curve: Curve) throws(CryptoError) {
        guard point.count == 1 + 2 * curve.coordinateByteCount, point.first == 0x04 else {
            throw .invalidKey("an uncompressed \(curve.rawValue) point has \(1 + 2 * curve.coordinateByteCount) bytes and starts with 04")
        }
    }

    /// Every EC key's `EC_KEY` form: what verification and ECDH use.
    var ec: OwnedECKey? { forms.ec }

    private var evp: OwnedPKey? { forms.evp }

    /// The `EVP_PKEY` form, built from the point for keys made from one.
    func evpKey() throws(CryptoError) -> OwnedPKey {
        if let evp { return evp }
        guard let curve, let knownPoint else { throw .unsupported("key without an EVP form") }
        return try makeECPublicKey(curve: curve, point: knownPoint)
    }

    /// An EC public key from its affine coordinates (as in a COSE_Key).
    public init(curve: Curve, x: [UInt8], y: [UInt8]) throws(CryptoError) {
        guard x.count == curve.coordinateByteCount, y.count == curve.coordinateByteCount else {
            throw .invalidKey("\(curve.rawValue) coordinates have \(curve.coordinateByteCount) bytes each")
        }
        try self.init(curve: curve, uncompressedPoint: [0x04] + x + y)
    }

    /// An Ed25519 public key from its 32 raw bytes.
    public init(ed25519 raw: [UInt8]) throws(CryptoError) {
        guard raw.count == 32 else { throw .invalidKey("an Ed25519 public key has 32 bytes") }
        guard let pkey = raw.withUnsafeBufferPointer({
            EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count)
        }) else { throw .invalidKey("Ed25519 public key rejected") }
        try self.init(owned: OwnedPKey(taking: pkey))
    }

    /// A public key from DER SubjectPublicKeyInfo.
    public init(spki der: [UInt8]) throws(CryptoError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw .malformedEncoding("SubjectPublicKeyInfo") }
        let owned = OwnedPKey(taking: parsed)
        try checkPublicKey(owned)
        try self.init(owned: owned)
    }

    /// A public key from a PEM `PUBLIC KEY` block.
    public init(pem: String) throws(CryptoError) {
        let parsed = try withMemoryBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let parsed else { throw .malformedEncoding("PEM public key") }
        let owned = OwnedPKey(taking: parsed)
        try checkPublicKey(owned)
        try self.init(owned: owned)
    }

    public var curve: Curve? {
        if case .ec(let curve) = type { return curve }
        return nil
    }

    /// `04 || X || Y` for EC keys; nil for other key types.
    public var uncompressedPoint: [UInt8]? {
        if let knownPoint { return knownPoint }
        return exportedPoint
    }

    private var exportedPoint: [UInt8]? {
        guard let curve, let evp else { return nil }
        guard let x = bigNumberParameter(evp.pointer, "qx", width: curve.coordinateByteCount),
              let y = bigNumberParameter(evp.pointer, "qy", width: curve.coordinateByteCount)
        else { return nil }
        return [0x04] + x + y
    }

    /// The raw 32 bytes of an Ed25519 key; nil for other key types.
    public var ed25519Raw: [UInt8]? {
        guard type == .ed25519, let evp else { return nil }
        var length = 0
        guard EVP_PKEY_get_raw_public_key(evp.pointer, nil, &length) == 1 else { return nil }
        var raw = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_get_raw_public_key(evp.pointer, &raw, &length) == 1 else { return nil }
        return raw
    }

    /// DER SubjectPublicKeyInfo.
    public var spki: [UInt8] {
        guard let evp = try? evpKey() else { return [] }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(evp.pointer, &out)
        guard length > 0, let out else { return [] }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}

/// A private key. Its secret never leaves the OpenSSL object except through
/// `pkcs8PEM()`, which exists to write key files.
public struct PrivateKey: Sendable {
    let key: OwnedPKey
    public let publicKey: PublicKey

    init(owned: OwnedPKey) throws(CryptoError) {
        self.key = owned
        // The same key objects serve as the public half: OpenSSL uses only
        // their public component for verification and export.
        // Private keys live long (merchant keys): export the public point once,
        // not on every HPKE open.
        let half = try PublicKey(owned: owned)
        if half.curve == nil {
            self.publicKey = half
        } else {
            self.publicKey = try PublicKey(owned: owned, point: half.uncompressedPoint, ec: half.ec)
        }
    }

    /// A fresh key on `curve` from OpenSSL's CSPRNG.
    public static func generate(curve: Curve) throws(CryptoError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .openSSL(lastOpenSSLError()) }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, curve.openSSLGroupName) == 1,
              EVP_PKEY_generate(context, &generated) == 1,
              let generated
        else { throw .openSSL(lastOpenSSLError()) }
        return try PrivateKey(owned: OwnedPKey(taking: generated))
    }

    /// A fresh Ed25519 key.
    public static func generateEd25519() throws(CryptoError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else { throw .openSSL(lastOpenSSLError()) }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_generate(context, &generated) == 1, let generated
        else { throw .openSSL(lastOpenSSLError()) }
        return try PrivateKey(owned: OwnedPKey(taking: generated))
    }

    /// An EC private key from its big-endian scalar (test vectors give keys this way).
    public init(curve: Curve, scalar: [UInt8]) throws(CryptoError) {
        guard scalar.count == curve.coordinateByteCount else {
            throw .invalidKey("a \(curve.rawValue) scalar has \(curve.coordinateByteCount) bytes")
        }
        let point = try publicPoint(forScalar: scalar, curve: curve)
        try self.init(owned: makeECKey(curve: curve, publicPoint: point, privateScalar: scalar))
    }

    /// A private key from PEM: PKCS#8 (`PRIVATE KEY`) or SEC 1 (`EC PRIVATE KEY`).
    public init(pem: String) throws(CryptoError) {
        // An encrypted key fails: a server has no terminal to prompt on.
        let parsed = try withMemoryBIO(pem) { bio in veridoc_read_private_key_pem(bio) }
        guard let parsed else { throw .malformedEncoding("PEM private key") }
        try self.init(owned: OwnedPKey(taking: parsed))
    }

    public var type: KeyType { publicKey.type }
}

// MARK: - Shared helpers

func lastOpenSSLError() -> String {
    var text = [CChar](repeating: 0, count: 256)
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "unknown OpenSSL error" }
    ERR_error_string_n(code, &text, text.count)
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Empties this thread's OpenSSL error queue. `ERR_clear_error` resets all
/// sixteen slots even when nothing was queued, as after every valid
/// signature; a peek at an empty queue costs a small fraction of that.
func clearOpenSSLErrors() {
    if ERR_peek_error() != 0 { ERR_clear_error() }
}

/// Runs `body` with a read-only memory BIO over `text`.
func withMemoryBIO<T>(_ text: String, _ body: (OpaquePointer) -> T) throws(CryptoError) -> T {
    let bytes = Array(text.utf8)
    // BIO_new_mem_buf takes an Int32 length; no key file comes near that.
    guard bytes.count <= Int(Int32.max) else { throw .malformedEncoding("PEM input too large") }
    let result: T? = bytes.withUnsafeBytes { buffer in
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
        defer { BIO_free(bio) }
        return body(bio)
    }
    guard let result else { throw .openSSL(lastOpenSSLError()) }
    return result
}

func bigNumberParameter(_ pkey: OpaquePointer, _ name: String, width: Int) -> [UInt8]? {
    var number: OpaquePointer?
    guard EVP_PKEY_get_bn_param(pkey, name, &number) == 1, let number else { return nil }
    defer { BN_free(number) }
    var out = [UInt8](repeating: 0, count: width)
    guard BN_bn2binpad(number, &out, Int32(width)) == Int32(width) else { return nil }
    return out
}

/// Rejects points at infinity, off the curve or with out-of-range coordinates.
/// The quick check is complete for P-256/384/521: their cofactor is 1, so a
/// point on the curve is in the prime-order group, and the full check's extra
/// multiplication by the order (as costly as an ECDH) proves nothing more.
func checkPublicKey(_ key: OwnedPKey) throws(CryptoError) {
    guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_EC else { return }
    guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw .openSSL(lastOpenSSLError()) }
    defer { EVP_PKEY_CTX_free(context) }
    guard EVP_PKEY_public_check_quick(context) == 1 else {
        ERR_clear_error()
        throw .pointNotOnCurve
    }
}

private func publicPoint(forScalar scalar: [UInt8], curve: Curve) throws(CryptoError) -> [UInt8] {
    guard let group = EC_GROUP_new_by_curve_name(curve.nid) else { throw .openSSL(lastOpenSSLError()) }
    defer { EC_GROUP_free(group) }
    guard let secret = BN_bin2bn(scalar, Int32(scalar.count), nil) else { throw .openSSL(lastOpenSSLError()) }
    defer { BN_clear_free(secret) }
    guard BN_is_zero(secret) == 0, BN_cmp(secret, EC_GROUP_get0_order(group)) < 0 else {
        throw .invalidKey("scalar out of range")
    }
    guard let point = EC_POINT_new(group) else { throw .openSSL(lastOpenSSLError()) }
    defer { EC_POINT_free(point) }
    guard EC_POINT_mul(group, point, secret, nil, nil, nil) == 1 else { throw .openSSL(lastOpenSSLError()) }
    var out = [UInt8](repeating: 0, count: 1 + 2 * curve.coordinateByteCount)
    guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &out, out.count, nil) == out.count else {
        throw .openSSL(lastOpenSSLError())
    }
    return out
}

/// Builds an EC `EVP_PKEY` from its public point and, for a key pair, its scalar.
func makeECKey(curve: Curve, publicPoint: [UInt8], privateScalar: [UInt8]?) throws(CryptoError) -> OwnedPKey {
    guard let builder = OSSL_PARAM_BLD_new() else { throw .openSSL(lastOpenSSLError()) }
    defer { OSSL_PARAM_BLD_free(builder) }
    var scalarNumber: OpaquePointer?
    defer { if let scalarNumber { BN_clear_free(scalarNumber) } }
    let groupName = curve.openSSLGroupName
    let built: UnsafeMutablePointer<OSSL_PARAM>? = groupName.withCString { group in
        publicPoint.withUnsafeBytes { point -> UnsafeMutablePointer<OSSL_PARAM>? in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, veridoc_param_group_name(), group, 0) == 1,
                  OSSL_PARAM_BLD_push_octet_string(builder, veridoc_param_pub_key(), point.baseAddress, point.count) == 1
            else { return nil }
            if let privateScalar {
                scalarNumber = BN_bin2bn(privateScalar, Int32(privateScalar.count), nil)
                guard let scalarNumber, OSSL_PARAM_BLD_push_BN(builder, veridoc_param_priv_key(), scalarNumber) == 1 else { return nil }
            }
            return OSSL_PARAM_BLD_to_param(builder)
        }
    }
    guard let params = built else { throw .invalidKey(lastOpenSSLError()) }
    defer { OSSL_PARAM_free(params) }
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .openSSL(lastOpenSSLError()) }
    defer { EVP_PKEY_CTX_free(context) }
    var pkey: OpaquePointer?
    let selection = privateScalar == nil ? veridoc_selection_public_key() : veridoc_selection_keypair()
    guard EVP_PKEY_fromdata_init(context) == 1,
          EVP_PKEY_fromdata(context, &pkey, selection, params) == 1,
          let pkey
    else {
        ERR_clear_error()
        throw .pointNotOnCurve
    }
    return OwnedPKey(taking: pkey)
}
