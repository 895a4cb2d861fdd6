import COpenSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes X.509 v3 certificates at run time for Veridoc's own test issuer and demo
/// (IACA roots and document signers). Not meant for production PKI.
public struct CertificateBuilder: Sendable {
    public var subject: [(String, String)]
    public var publicKey: PublicKey
    public var notBefore: Date
    public var notAfter: Date
    public var serial: UInt64
    /// nil: no basicConstraints extension; true/false: a critical one with that cA flag.
    public var isCA: Bool?
    /// Critical when present.
    public var keyUsage: KeyUsage?
    /// Dotted OIDs; critical when present.
    public var extendedKeyUsage: [String]?
    /// Subject key identifier (SHA-1 of the public key, RFC 5280 §4.2.1.2 method 1)
    /// and the issuer's as the authority key identifier. OpenSSL's strict path
    /// validation requires both on every certificate below the anchor.
    public var includeKeyIdentifiers: Bool = true
    /// Extensions added verbatim after the others, e.g. an unknown critical one for hostile tests.
    public var extraExtensions: [(oid: String, critical: Bool, der: [UInt8])] = []

    /// `subject` lists attributes in certificate order by short name or dotted OID: ("CN", "Test IACA"), ("C", "US").
    public init(subject: [(String, String)], publicKey: PublicKey, notBefore: Date, notAfter: Date,
                serial: UInt64 = UInt64.random(in: 1...UInt64.max)) {
        self.subject = subject
        self.publicKey = publicKey
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.serial = serial
    }

    /// Issuer = subject, signed with `key` (which should match `publicKey`).
    public func selfSigned(with key: PrivateKey) throws(CryptoError) -> Certificate {
        try build(issuerName: nil, issuerKeyIdentifier: nil, signingKey: key)
    }

    /// Issued by `issuer`, signed with `issuerKey`, which must be the key `issuer` certifies.
    public func signed(by issuer: Certificate, issuerKey: PrivateKey) throws(CryptoError) -> Certificate {
        guard X509_check_private_key(issuer.handle.pointer, issuerKey.key.pointer) == 1 else {
            ERR_clear_error()
            throw .invalidKey("the issuer key does not match the issuer certificate")
        }
        var authorityIdentifier = issuer.subjectKeyIdentifier
        if authorityIdentifier == nil { authorityIdentifier = try keyIdentifier(of: issuer.handle.pointer) }
        return try build(issuerName: X509_get_subject_name(issuer.handle.pointer), issuerKeyIdentifier: authorityIdentifier, signingKey: issuerKey)
    }

    private func build(issuerName: OpaquePointer?, issuerKeyIdentifier: [UInt8]?, signingKey: PrivateKey) throws(CryptoError) -> Certificate {
        guard let x509 = X509_new() else { throw .openSSL(lastOpenSSLError()) }
        defer { X509_free(x509) }
        let subjectKey = try publicKey.evpKey()
        guard X509_set_version(x509, Int(X509_VERSION_3)) == 1,
              let serialNumber = X509_get_serialNumber(x509),
              ASN1_INTEGER_set_uint64(serialNumber, serial) == 1,
              ASN1_TIME_set(X509_getm_notBefore(x509), try timeT(notBefore)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x509), try timeT(notAfter)) != nil,
              X509_set_pubkey(x509, subjectKey.pointer) == 1
        else { throw .openSSL(lastOpenSSLError()) }

        let name = try makeName(subject)
        defer { X509_NAME_free(name) }
        guard X509_set_subject_name(x509, name) == 1,
              X509_set_issuer_name(x509, issuerName ?? name) == 1
        else { throw .openSSL(lastOpenSSLError()) }

        try addExtensions(to: x509, issuerKeyIdentifier: issuerKeyIdentifier)

        guard X509_sign(x509, signingKey.key.pointer, try digest(for: signingKey)) > 0 else {
            throw .openSSL(lastOpenSSLError())
        }
        return try Certificate(encoding: x509)
    }

    private func addExtensions(to x509: OpaquePointer, issuerKeyIdentifier: [UInt8]?) throws(CryptoError) {
        if let isCA {
            guard let constraints = BASIC_CONSTRAINTS_new() else { throw .openSSL(lastOpenSSLError()) }
            defer { BASIC_CONSTRAINTS_free(constraints) }
            // DER BOOLEAN TRUE is 0xFF; OpenSSL's template stores it as this int.
            constraints.pointee.ca = isCA ? 0xFF : 0
            try add(x509, NID_basic_constraints, UnsafeMutableRawPointer(constraints), critical: true)
        }
        if let keyUsage {
            guard let bits = ASN1_BIT_STRING_new() else { throw .openSSL(lastOpenSSLError()) }
            defer { ASN1_BIT_STRING_free(bits) }
            for position in keyUsage.bitPositions where ASN1_BIT_STRING_set_bit(bits, position, 1) != 1 {
                throw .openSSL(lastOpenSSLError())
            }
            try add(x509, NID_key_usage, UnsafeMutableRawPointer(bits), critical: true)
        }
        if let extendedKeyUsage {
            guard let usages = OPENSSL_sk_new_null() else { throw .openSSL(lastOpenSSLError()) }
            // Frees the stack and every OID pushed onto it.
            defer { EXTENDED_KEY_USAGE_free(usages) }
            for oid in extendedKeyUsage {
                let object = try objectIdentifier(oid)
                guard OPENSSL_sk_push(usages, UnsafeRawPointer(object)) > 0 else {
                    ASN1_OBJECT_free(object)
                    throw .openSSL(lastOpenSSLError())
                }
            }
            try add(x509, NID_ext_key_usage, UnsafeMutableRawPointer(usages), critical: true)
        }
        if includeKeyIdentifiers {
            let subjectIdentifier = try keyIdentifier(of: x509)
            let identifier = try octetString(subjectIdentifier)
            defer { ASN1_OCTET_STRING_free(identifier) }
            try add(x509, NID_subject_key_identifier, UnsafeMutableRawPointer(identifier), critical: false)

            guard let authority = AUTHORITY_KEYID_new() else { throw .openSSL(lastOpenSSLError()) }
            defer { AUTHORITY_KEYID_free(authority) }
            authority.pointee.keyid = try octetString(issuerKeyIdentifier ?? subjectIdentifier)
            try add(x509, NID_authority_key_identifier, UnsafeMutableRawPointer(authority), critical: false)
        }
        for extra in extraExtensions {
            let object = try objectIdentifier(extra.oid)
            defer { ASN1_OBJECT_free(object) }
            let value = try octetString(extra.der)
            defer { ASN1_OCTET_STRING_free(value) }
            guard let created = X509_EXTENSION_create_by_OBJ(nil, object, extra.critical ? 1 : 0, value) else {
                throw .openSSL(lastOpenSSLError())
            }
            defer { X509_EXTENSION_free(created) }
            guard X509_add_ext(x509, created, -1) == 1 else { throw .openSSL(lastOpenSSLError()) }
        }
    }
}

/// Encodes `value` as extension `nid` (X509_add1_ext_i2d copies, the caller keeps ownership).
private func add(_ x509: OpaquePointer, _ nid: Int32, _ value: UnsafeMutableRawPointer, critical: Bool) throws(CryptoError) {
    guard X509_add1_ext_i2d(x509, nid, value, critical ? 1 : 0, UInt(X509V3_ADD_DEFAULT)) == 1 else {
        throw .openSSL(lastOpenSSLError())
    }
}

private func makeName(_ attributes: [(String, String)]) throws(CryptoError) -> OpaquePointer {
    guard let name = X509_NAME_new() else { throw .openSSL(lastOpenSSLError()) }
    for (type, value) in attributes {
        let bytes = Array(value.utf8)
        // OpenSSL picks the ASN.1 string type per attribute (PrintableString for C) and checks its size.
        guard X509_NAME_add_entry_by_txt(name, type, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
            X509_NAME_free(name)
            throw .invalidInput("name attribute \(type): \(lastOpenSSLError())")
        }
    }
    return name
}

/// Caller frees with ASN1_OBJECT_free. `1` = dotted numbers only, so no name lookup can misread it.
func objectIdentifier(_ dotted: String) throws(CryptoError) -> OpaquePointer {
    guard let object = OBJ_txt2obj(dotted, 1) else {
        ERR_clear_error()
        throw .invalidInput("not a dotted OID: \(dotted)")
    }
    return object
}

/// Caller frees with ASN1_OCTET_STRING_free (or hands it to a structure that frees it).
func octetString(_ bytes: [UInt8]) throws(CryptoError) -> UnsafeMutablePointer<ASN1_OCTET_STRING> {
    guard let string = ASN1_OCTET_STRING_new() else { throw .openSSL(lastOpenSSLError()) }
    guard ASN1_OCTET_STRING_set(string, bytes, Int32(bytes.count)) == 1 else {
        ASN1_OCTET_STRING_free(string)
        throw .openSSL(lastOpenSSLError())
    }
    return string
}

/// SHA-1 over the subjectPublicKey BIT STRING (RFC 5280 §4.2.1.2 method 1); SHA-1 is
/// what the RFC names and is used here as an identifier, not for security.
private func keyIdentifier(of x509: OpaquePointer) throws(CryptoError) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    guard X509_pubkey_digest(x509, EVP_sha1(), &digest, &length) == 1 else { throw .openSSL(lastOpenSSLError()) }
    return Array(digest.prefix(Int(length)))
}

/// The digest paired with the signing key: ECDSA uses the hash matching the curve
/// size; Ed25519 hashes internally and takes none.
func digest(for key: PrivateKey) throws(CryptoError) -> OpaquePointer? {
    switch key.type {
    case .ec(.p256): EVP_sha256()
    case .ec(.p384): EVP_sha384()
    case .ec(.p521): EVP_sha512()
    case .ed25519: nil
    }
}

func timeT(_ date: Date) throws(CryptoError) -> time_t {
    let seconds = date.timeIntervalSince1970.rounded(.down)
    guard seconds.isFinite, seconds > Double(time_t.min), seconds < Double(time_t.max) else {
        throw .invalidInput("certificate date out of range")
    }
    return time_t(seconds)
}
