import COpenSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Owns one `X509` and frees it on deinit.
///
/// Sendable: the certificate is never mutated after construction, and its
/// lazily computed extension cache is filled in `init` (see `X509Handle.init`),
/// so concurrent readers only read. Reference counting (`X509_up_ref` when
/// OpenSSL puts it in a chain) is atomic.
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer
    let facts = LazyFacts()

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
        // Fills OpenSSL's per-certificate extension cache now, while only this
        // thread can see the object, instead of on a later concurrent read.
        _ = X509_check_purpose(pointer, -1, 0)
    }

    deinit {
        X509_free(pointer)
    }
}

/// An X.509 certificate. Two certificates are equal when their DER encodings are.
public struct Certificate: Sendable, Hashable {
    let handle: X509Handle
    /// The bytes the certificate was parsed from (or that OpenSSL produced when
    /// building it), kept verbatim so signatures and fingerprints cover what was received.
    public let der: [UInt8]
    public let sha256Fingerprint: [UInt8]

    public init(der input: some Collection<UInt8>) throws(CryptoError) {
        let bytes = Array(input)
        let parsed = try decodeDER(bytes, what: "certificate DER", free: X509_free) { d2i_X509(nil, &$0, $1) }
        let handle = X509Handle(taking: parsed)
        guard X509_get0_notBefore(parsed).flatMap(dateFromASN1Time) != nil,
              X509_get0_notAfter(parsed).flatMap(dateFromASN1Time) != nil
        else { throw .malformedEncoding("certificate validity dates") }
        self.handle = handle
        self.der = bytes
        self.sha256Fingerprint = sha256(bytes)
    }

    /// Every `CERTIFICATE` block of `pem`, in order. Blocks of other types (a
    /// private key in the same file) are skipped; a damaged block is an error.
    public static func parsePEM(_ pem: String) throws(CryptoError) -> [Certificate] {
        let blocks = try withMemoryBIO(pem) { bio in readPEMBlocks(bio) }
        guard let blocks else { throw .malformedEncoding("PEM") }
        var certificates: [Certificate] = []
        for (name, body) in blocks where name == "CERTIFICATE" {
            certificates.append(try Certificate(der: body))
        }
        guard !certificates.isEmpty else { throw .malformedEncoding("no CERTIFICATE block in PEM") }
        return certificates
    }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.der == rhs.der
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sha256Fingerprint)
    }

    public var subject: DistinguishedName {
        DistinguishedName(x509Name: X509_get_subject_name(handle.pointer))
    }

    public var issuer: DistinguishedName {
        DistinguishedName(x509Name: X509_get_issuer_name(handle.pointer))
    }

    // Both dates were checked to decode in `init`.
    public var notBefore: Date {
        X509_get0_notBefore(handle.pointer).flatMap(dateFromASN1Time) ?? .distantPast
    }

    public var notAfter: Date {
        X509_get0_notAfter(handle.pointer).flatMap(dateFromASN1Time) ?? .distantPast
    }

    /// Big-endian hex of the serial, with a leading "-" for the negative
    /// serials some issuers emit (RFC 5280 forbids them; real certificates have them).
    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(handle.pointer),
              let number = ASN1_INTEGER_to_BN(serial, nil)
        else { return "" }
        defer { BN_free(number) }
        guard let text = BN_bn2hex(number) else { return "" }
        defer { CRYPTO_free(text, #fileID, #line) }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: strlen(text)), as: UTF8.self)
    }

    /// The subject public key. Only the key types Veridoc verifies with are
    /// accepted; RSA and others are `.unsupported`.
    public func publicKey() throws(CryptoError) -> PublicKey {
        guard let pkey = X509_get_pubkey(handle.pointer) else {
            ERR_clear_error()
            throw .unsupported("certificate public key")
        }
        let owned = OwnedPKey(taking: pkey)
        try checkPublicKey(owned)
        let key = try PublicKey(owned: owned)
        // A document signer's key verifies every event it signed, and
        // `SignatureVerifierCache` names it by its point: exported once here
        // (a round through the provider), not on every verification.
        guard key.curve != nil else { return key }
        return try PublicKey(owned: owned, point: key.uncompressedPoint, ec: key.ec)
    }

    public var keyUsage: KeyUsage? {
        guard X509_get_extension_flags(handle.pointer) & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        return KeyUsage(openSSLBits: X509_get_key_usage(handle.pointer))
    }

    /// Dotted OIDs of the EKU extension; nil when it is absent or cannot be decoded.
    public var extendedKeyUsage: [String]? {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(handle.pointer, NID_ext_key_usage, &critical, nil) else {
            ERR_clear_error()
            return nil
        }
        let stack = OpaquePointer(raw)
        defer { EXTENDED_KEY_USAGE_free(stack) }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index in
            OPENSSL_sk_value(stack, index).flatMap { objectIdentifierText(OpaquePointer($0)) }
        }
    }

    public var basicConstraints: BasicConstraints? {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(handle.pointer, NID_basic_constraints, &critical, nil) else {
            ERR_clear_error()
            return nil
        }
        let constraints = raw.assumingMemoryBound(to: BASIC_CONSTRAINTS.self)
        defer { BASIC_CONSTRAINTS_free(constraints) }
        var pathLength: Int?
        if let length = constraints.pointee.pathlen {
            var value: Int64 = 0
            if ASN1_INTEGER_get_int64(&value, length) == 1 { pathLength = Int(value) } else { ERR_clear_error() }
        }
        return BasicConstraints(isCA: constraints.pointee.ca != 0, pathLength: pathLength)
    }

    public var subjectKeyIdentifier: [UInt8]? {
        X509_get0_subject_key_id(handle.pointer).map(asn1StringBytes)
    }

    /// The keyIdentifier field of the AKI extension (issuer name and serial forms are ignored).
    public var authorityKeyIdentifier: [UInt8]? {
        X509_get0_authority_key_id(handle.pointer).map(asn1StringBytes)
    }

    /// Dotted OIDs of critical extensions OpenSSL cannot process; chain
    /// validation rejects a path that contains any.
    public var unhandledCriticalExtensions: [String] {
        (0..<X509_get_ext_count(handle.pointer)).compactMap { index in
            guard let extensionPointer = X509_get_ext(handle.pointer, index),
                  X509_EXTENSION_get_critical(extensionPointer) != 0,
                  X509_supported_extension(extensionPointer) == 0
            else { return nil }
            return objectIdentifierText(X509_EXTENSION_get_object(extensionPointer))
        }
    }

    /// Subject and issuer names are equal (the certificate may still be signed by another key).
    public var isSelfIssued: Bool {
        X509_NAME_cmp(X509_get_subject_name(handle.pointer), X509_get_issuer_name(handle.pointer)) == 0
    }
}

/// RFC 5280 §4.2.1.3 key usage bits.
public struct KeyUsage: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let digitalSignature = KeyUsage(rawValue: 1 << 0)
    public static let nonRepudiation = KeyUsage(rawValue: 1 << 1)
    public static let keyEncipherment = KeyUsage(rawValue: 1 << 2)
    public static let dataEncipherment = KeyUsage(rawValue: 1 << 3)
    public static let keyAgreement = KeyUsage(rawValue: 1 << 4)
    public static let keyCertSign = KeyUsage(rawValue: 1 << 5)
    public static let cRLSign = KeyUsage(rawValue: 1 << 6)
    public static let encipherOnly = KeyUsage(rawValue: 1 << 7)
    public static let decipherOnly = KeyUsage(rawValue: 1 << 8)

    /// Our bit n is RFC bit n; OpenSSL packs the same bits as the first two
    /// bytes of the BIT STRING, so the order differs.
    static let openSSLMapping: [(KeyUsage, Int32)] = [
        (.digitalSignature, KU_DIGITAL_SIGNATURE), (.nonRepudiation, KU_NON_REPUDIATION),
        (.keyEncipherment, KU_KEY_ENCIPHERMENT), (.dataEncipherment, KU_DATA_ENCIPHERMENT),
        (.keyAgreement, KU_KEY_AGREEMENT), (.keyCertSign, KU_KEY_CERT_SIGN), (.cRLSign, KU_CRL_SIGN),
        (.encipherOnly, KU_ENCIPHER_ONLY), (.decipherOnly, KU_DECIPHER_ONLY),
    ]

    init(openSSLBits bits: UInt32) {
        self = []
        for (usage, bit) in Self.openSSLMapping where bits & UInt32(bit) != 0 { insert(usage) }
    }

    /// RFC 5280 bit positions (0 = digitalSignature) of the members, for encoding.
    var bitPositions: [Int32] {
        (0..<9).filter { contains(KeyUsage(rawValue: 1 << $0)) }.map(Int32.init)
    }
}

public struct BasicConstraints: Sendable, Equatable {
    public var isCA: Bool
    public var pathLength: Int?

    public init(isCA: Bool, pathLength: Int? = nil) {
        self.isCA = isCA
        self.pathLength = pathLength
    }
}

extension Certificate {
    /// A certificate from an X509 OpenSSL handed back (re-encoded, so it owns its copy).
    init(encoding pointer: OpaquePointer) throws(CryptoError) {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &out)
        guard length > 0, let out else { throw .openSSL(lastOpenSSLError()) }
        defer { CRYPTO_free(out, #fileID, #line) }
        try self.init(der: UnsafeBufferPointer(start: out, count: Int(length)))
    }
}

// MARK: - Helpers shared by the X.509 files

/// What an OpenSSL `d2i_*` decoder makes of all of `bytes` (`what` names
/// them in errors), the caller's to free: empty input, input OpenSSL
/// refuses and trailing bytes after what it read are errors (the object
/// already made is then freed with `free`).
func decodeDER(_ bytes: [UInt8], what: String, free: (OpaquePointer) -> Void,
               _ d2i: (inout UnsafePointer<UInt8>?, Int) -> OpaquePointer?) throws(CryptoError) -> OpaquePointer {
    guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { throw .malformedEncoding(what) }
    let (decoded, consumed): (OpaquePointer?, Int) = bytes.withUnsafeBufferPointer { buffer in
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        let decoded = d2i(&cursor, buffer.count)
        return (decoded, cursor.map { $0 - buffer.baseAddress! } ?? 0)
    }
    guard let decoded else {
        ERR_clear_error()
        throw .malformedEncoding(what)
    }
    guard consumed == bytes.count else {
        free(decoded)
        throw .malformedEncoding("trailing bytes after \(what)")
    }
    return decoded
}

/// The dotted form of an OID (never its name), so callers compare against spec text.
func objectIdentifierText(_ object: OpaquePointer?) -> String? {
    guard let object else { return nil }
    var buffer = [CChar](repeating: 0, count: 128)
    let needed = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
    guard needed > 0 else { return nil }
    if Int(needed) >= buffer.count {
        buffer = [CChar](repeating: 0, count: Int(needed) + 1)
        guard OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1) == needed else { return nil }
    }
    return String(decoding: buffer.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func asn1StringBytes(_ string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
    let length = Int(ASN1_STRING_length(string))
    guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: length))
}

/// Converts UTCTime / GeneralizedTime; computed by hand (days from the civil
/// date) so it needs neither `timegm` nor a calendar.
func dateFromASN1Time(_ time: UnsafePointer<ASN1_TIME>) -> Date? {
    var parts = tm()
    guard ASN1_TIME_to_tm(time, &parts) == 1 else {
        ERR_clear_error()
        return nil
    }
    let year = Int(parts.tm_year) + 1900, month = Int(parts.tm_mon) + 1, day = Int(parts.tm_mday)
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let seconds = days * 86_400 + Int(parts.tm_hour) * 3600 + Int(parts.tm_min) * 60 + Int(parts.tm_sec)
    return Date(timeIntervalSince1970: TimeInterval(seconds))
}

/// Reads every PEM block as (label, decoded body); nil when a block is damaged.
private func readPEMBlocks(_ bio: OpaquePointer) -> [(String, [UInt8])]? {
    var blocks: [(String, [UInt8])] = []
    while true {
        var name: UnsafeMutablePointer<CChar>?
        var header: UnsafeMutablePointer<CChar>?
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else {
            // Running out of BEGIN lines is the normal end; anything else is a damaged block.
            let reason = ERR_GET_REASON(ERR_peek_last_error())
            ERR_clear_error()
            return reason == PEM_R_NO_START_LINE ? blocks : nil
        }
        defer {
            CRYPTO_free(name, #fileID, #line)
            CRYPTO_free(header, #fileID, #line)
            CRYPTO_free(data, #fileID, #line)
        }
        let label = name.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
        let body = data.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
        blocks.append((label, body))
    }
}

extension Certificate {
    /// `Certificate(der:)` through a process-wide cache keyed by the DER
    /// itself: a document signer arrives in the x5chain of every event it
    /// signed, and parsing it (d2i_X509 and OpenSSL's extension cache) costs
    /// as much as an ECDSA verify. (A SHA-256 key would cost more than hashing
    /// the DER with the dictionary's seeded hash, which also resists flooding.)
    /// The cached value is the same immutable certificate a fresh parse would
    /// give; DER that fails to parse is never cached. Bounded: at `capacity`
    /// entries the cache starts over, and a certificate larger than
    /// `maxCachedDER` is parsed every time instead of kept: anyone may put
    /// eight certificates in an x5chain, and one of hundreds of kilobytes
    /// per entry would make the cache gigabytes.
    public static func cached(der input: some Collection<UInt8>) throws(CryptoError) -> Certificate {
        let bytes = Array(input)
        guard !bytes.isEmpty else { throw .malformedEncoding("certificate DER") }
        guard bytes.count <= maxCachedDER else { return try Certificate(der: bytes) }
        if let hit = CertificateCache.shared.get(bytes) { return hit }
        let certificate = try Certificate(der: bytes)
        CertificateCache.shared.put(bytes, certificate)
        return certificate
    }

    /// Document signers and IACAs are one to two kilobytes; past this a
    /// certificate is not cached (so the cache holds at most 4,096 of them).
    public static let maxCachedDER = 4_096
}

final class CertificateCache: @unchecked Sendable {
    static let shared = CertificateCache(capacity: 4096)
    private let capacity: Int
    // Guarded by `mutex`.
    private var entries: [DER: Certificate] = [:]

    /// DER bytes as a key hashed in one pass: `[UInt8]`'s own hashing feeds
    /// the hasher a byte at a time, several times slower on certificates.
    private struct DER: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(capacity: Int) {
        self.capacity = capacity
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    func get(_ der: [UInt8]) -> Certificate? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return entries[DER(bytes: der)]
    }

    func put(_ der: [UInt8], _ certificate: Certificate) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[DER(bytes: der)] = certificate
    }
}
