import COpenSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Builds and signs X.509 v2 CRLs for the test issuer: its IACA's
/// statement of which certificates it revoked. Not meant for production PKI.
public struct CertificateRevocationListBuilder {
    public struct Entry {
        /// Whose serial number is listed; nil: `serialNumber`'s.
        public var certificate: Certificate?
        public var serialNumber: UInt64 = 0
        /// RFC 5280 §5.3.1 reason code; nil: no reason extension.
        public var reason: Int?
        /// Adds a critical private extension to the entry (a CRL that must not be used).
        public var criticalExtension = false

        public init(_ certificate: Certificate, reason: Int? = nil, criticalExtension: Bool = false) {
            self.certificate = certificate
            self.reason = reason
            self.criticalExtension = criticalExtension
        }

        /// A serial number no certificate at hand has (a large list's filler).
        public init(serialNumber: UInt64, reason: Int? = nil) {
            self.serialNumber = serialNumber
            self.reason = reason
        }
    }

    public var thisUpdate: Date
    /// nil: no nextUpdate (which Veridoc refuses).
    public var nextUpdate: Date?
    public var entries: [Entry] = []
    /// Extensions added as given (an issuing distribution point, a delta CRL indicator).
    public var extraExtensions: [(oid: String, critical: Bool, der: [UInt8])] = []

    public init(thisUpdate: Date, nextUpdate: Date?) {
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }

    /// DER of the CRL, issued in `issuer`'s name and signed with `key`
    /// (normally the key `issuer` certifies; another key makes a forgery).
    public func signed(as issuer: Certificate, with key: PrivateKey) throws(CryptoError) -> [UInt8] {
        guard let crl = X509_CRL_new() else { throw .openSSL(lastOpenSSLError()) }
        defer { X509_CRL_free(crl) }
        guard X509_CRL_set_version(crl, 1) == 1,
              X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer.handle.pointer)) == 1
        else { throw .openSSL(lastOpenSSLError()) }
        try setTime(thisUpdate) { X509_CRL_set1_lastUpdate(crl, $0) }
        if let nextUpdate { try setTime(nextUpdate) { X509_CRL_set1_nextUpdate(crl, $0) } }
        for entry in entries { try add(entry, to: crl) }
        for extra in extraExtensions {
            let object = try objectIdentifier(extra.oid)
            defer { ASN1_OBJECT_free(object) }
            let value = try octetString(extra.der)
            defer { ASN1_OCTET_STRING_free(value) }
            guard let created = X509_EXTENSION_create_by_OBJ(nil, object, extra.critical ? 1 : 0, value) else { throw .openSSL(lastOpenSSLError()) }
            defer { X509_EXTENSION_free(created) }
            guard X509_CRL_add_ext(crl, created, -1) == 1 else { throw .openSSL(lastOpenSSLError()) }
        }
        guard X509_CRL_sort(crl) == 1, X509_CRL_sign(crl, key.key.pointer, try digest(for: key)) > 0 else { throw .openSSL(lastOpenSSLError()) }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_CRL(crl, &out)
        guard length > 0, let out else { throw .openSSL(lastOpenSSLError()) }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    private func add(_ entry: Entry, to crl: OpaquePointer) throws(CryptoError) {
        guard let revoked = X509_REVOKED_new() else { throw .openSSL(lastOpenSSLError()) }
        var owned = true
        defer { if owned { X509_REVOKED_free(revoked) } }
        if let certificate = entry.certificate {
            guard let serial = X509_get0_serialNumber(certificate.handle.pointer),
                  X509_REVOKED_set_serialNumber(revoked, UnsafeMutablePointer(mutating: serial)) == 1
            else { throw .openSSL(lastOpenSSLError()) }
        } else {
            guard let serial = ASN1_INTEGER_new() else { throw .openSSL(lastOpenSSLError()) }
            defer { ASN1_INTEGER_free(serial) }
            guard ASN1_INTEGER_set_uint64(serial, entry.serialNumber) == 1, X509_REVOKED_set_serialNumber(revoked, serial) == 1 else {
                throw .openSSL(lastOpenSSLError())
            }
        }
        try setTime(thisUpdate) { X509_REVOKED_set_revocationDate(revoked, $0) }
        if let reason = entry.reason {
            guard let value = ASN1_ENUMERATED_new() else { throw .openSSL(lastOpenSSLError()) }
            defer { ASN1_ENUMERATED_free(value) }
            guard ASN1_ENUMERATED_set(value, reason) == 1,
                  X509_REVOKED_add1_ext_i2d(revoked, NID_crl_reason, UnsafeMutableRawPointer(value), 0, 0) == 1
            else { throw .openSSL(lastOpenSSLError()) }
        }
        if entry.criticalExtension {
            // A private OID with an empty NULL: no verifier knows it.
            let object = try objectIdentifier("1.3.6.1.4.1.99999.1")
            defer { ASN1_OBJECT_free(object) }
            let value = try octetString([0x05, 0x00])
            defer { ASN1_OCTET_STRING_free(value) }
            guard let created = X509_EXTENSION_create_by_OBJ(nil, object, 1, value) else { throw .openSSL(lastOpenSSLError()) }
            defer { X509_EXTENSION_free(created) }
            guard X509_REVOKED_add_ext(revoked, created, -1) == 1 else { throw .openSSL(lastOpenSSLError()) }
        }
        guard X509_CRL_add0_revoked(crl, revoked) == 1 else { throw .openSSL(lastOpenSSLError()) }
        owned = false
    }

    private func setTime(_ date: Date, _ set: (UnsafeMutablePointer<ASN1_TIME>) -> Int32) throws(CryptoError) {
        guard let time = ASN1_TIME_set(nil, try timeT(date)) else { throw .openSSL(lastOpenSSLError()) }
        defer { ASN1_TIME_free(time) }
        guard set(time) == 1 else { throw .openSSL(lastOpenSSLError()) }
    }
}
