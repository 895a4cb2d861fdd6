import COpenSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Owns one `X509_CRL` and frees it on deinit. Only read after `init`.
final class X509CRLHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_CRL_free(pointer)
    }
}

/// An X.509 CRL (RFC 5280 §5) as a revocation check reads it: parsed once,
/// strictly, into its update times, its scope and its entries keyed by
/// serial number, so that a lookup per event reads a dictionary.
///
/// Refused at parsing, because a check could not honour them: a CRL without
/// `nextUpdate` (nothing says when it stops holding), a delta CRL (it only
/// amends a base CRL Veridoc would also need), an indirect CRL or one for
/// some reasons only (not the issuer's complete statement), any other
/// critical extension, and an entry with a critical extension (RFC 5280
/// §5.3: such a CRL must not be used). Its signature and issuer are
/// separate checks: they need the certificate that should have signed it.
public struct CertificateRevocationList: Sendable {
    /// What an entry says of a certificate.
    public enum Entry: Sendable, Equatable {
        /// Listed with any reason but the two below.
        case revoked
        /// `certificateHold` (6): suspended, may be released.
        case onHold
        /// `removeFromCRL` (8): meaningful only in a delta CRL, so a base
        /// CRL that carries it says nothing certain.
        case removed
    }

    /// What certificates the CRL speaks for (its issuing distribution point).
    public struct Scope: Sendable, Equatable {
        /// The `fullName` URIs of its distribution point; nil when it names none.
        public var distributionPointURIs: [String]?
        public var onlyUserCertificates = false
        public var onlyCACertificates = false

        public init(distributionPointURIs: [String]? = nil, onlyUserCertificates: Bool = false, onlyCACertificates: Bool = false) {
            self.distributionPointURIs = distributionPointURIs
            self.onlyUserCertificates = onlyUserCertificates
            self.onlyCACertificates = onlyCACertificates
        }
    }

    public let der: [UInt8]
    public let thisUpdate: Date
    public let nextUpdate: Date
    public let scope: Scope
    /// How many serials it lists.
    public var count: Int { entries.count }
    private let handle: X509CRLHandle
    private let entries: [[UInt8]: Entry]

    public init(der input: some Collection<UInt8>) throws(CryptoError) {
        let bytes = Array(input)
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { throw .malformedEncoding("CRL DER") }
        let (parsed, consumed): (OpaquePointer?, Int) = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let crl = d2i_X509_CRL(nil, &cursor, buffer.count)
            return (crl, cursor.map { $0 - buffer.baseAddress! } ?? 0)
        }
        guard let parsed else {
            ERR_clear_error()
            throw .malformedEncoding("CRL DER")
        }
        let handle = X509CRLHandle(taking: parsed)
        guard consumed == bytes.count else { throw .malformedEncoding("trailing bytes after CRL DER") }
        guard let thisUpdate = X509_CRL_get0_lastUpdate(parsed).flatMap(dateFromASN1Time) else { throw .malformedEncoding("CRL thisUpdate") }
        guard let next = X509_CRL_get0_nextUpdate(parsed) else { throw .unsupported("a CRL without nextUpdate") }
        guard let nextUpdate = dateFromASN1Time(next) else { throw .malformedEncoding("CRL nextUpdate") }
        scope = try Self.readScope(parsed)
        entries = try Self.readEntries(parsed)
        self.handle = handle
        self.der = bytes
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }

    /// Whether the CRL names `certificate`'s subject as its issuer (RFC 5280
    /// §6.3.3 (b): the CRL issuer must be the certificate's issuer).
    public func isIssued(by certificate: Certificate) -> Bool {
        X509_NAME_cmp(X509_CRL_get_issuer(handle.pointer), X509_get_subject_name(certificate.handle.pointer)) == 0
    }

    /// Whether the CRL's signature verifies with `key`.
    public func verifySignature(with key: PublicKey) -> Bool {
        guard let evp = try? key.evpKey() else { return false }
        guard X509_CRL_verify(handle.pointer, evp.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        return true
    }

    /// Why the CRL, fetched from `uri`, does not speak for `certificate`
    /// (RFC 5280 §6.3.3 (b)(2)); nil when it does.
    public func scopeProblem(for certificate: Certificate, fetchedFrom uri: String) -> String? {
        if let names = scope.distributionPointURIs, !names.contains(where: { $0.utf8.elementsEqual(uri.utf8) }) {
            return "the CRL's issuing distribution point is not the one the certificate names"
        }
        guard scope.onlyUserCertificates || scope.onlyCACertificates else { return nil }
        let isCA = certificate.basicConstraints?.isCA == true
        if scope.onlyUserCertificates && isCA { return "the CRL covers end-entity certificates only, and this certificate is a CA" }
        if scope.onlyCACertificates && !isCA { return "the CRL covers CA certificates only, and this certificate is not a CA" }
        return nil
    }

    /// The entry for `certificate`'s serial number; nil when it is not listed.
    public func entry(for certificate: Certificate) -> Entry? {
        let serial = certificate.facts.revocationSerial
        return serial.isEmpty ? nil : entries[serial]
    }

    private static func readScope(_ crl: OpaquePointer) throws(CryptoError) -> Scope {
        for index in 0..<X509_CRL_get_ext_count(crl) {
            guard let ext = X509_CRL_get_ext(crl, index) else { continue }
            let nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext))
            if nid == NID_delta_crl { throw .unsupported("a delta CRL") }
            guard X509_EXTENSION_get_critical(ext) != 0, nid != NID_issuing_distribution_point else { continue }
            throw .unsupported("a critical CRL extension \(objectIdentifierText(X509_EXTENSION_get_object(ext)) ?? "?")")
        }
        var critical: Int32 = 0
        guard let raw = X509_CRL_get_ext_d2i(crl, NID_issuing_distribution_point, &critical, nil) else {
            ERR_clear_error()
            if critical == -1 { return Scope() }
            throw .malformedEncoding("CRL issuing distribution point")
        }
        let point = raw.assumingMemoryBound(to: ISSUING_DIST_POINT.self)
        defer { ISSUING_DIST_POINT_free(point) }
        let idp = point.pointee
        if idp.indirectCRL != 0 { throw .unsupported("an indirect CRL") }
        if idp.onlysomereasons != nil { throw .unsupported("a CRL for some revocation reasons only") }
        if idp.onlyattr != 0 { throw .unsupported("a CRL of attribute certificates") }
        var scope = Scope(onlyUserCertificates: idp.onlyuser != 0, onlyCACertificates: idp.onlyCA != 0)
        if let name = idp.distpoint?.pointee {
            // A name relative to the issuer's is no location to compare with.
            guard name.type == 0, let names = name.name.fullname else { throw .unsupported("a CRL whose distribution point is a relative name") }
            scope.distributionPointURIs = uniformResourceIdentifiers(names)
        }
        return scope
    }

    private static func readEntries(_ crl: OpaquePointer) throws(CryptoError) -> [[UInt8]: Entry] {
        guard let revoked = X509_CRL_get_REVOKED(crl) else { return [:] }
        let stack = revoked
        let count = OPENSSL_sk_num(stack)
        var entries: [[UInt8]: Entry] = [:]
        entries.reserveCapacity(Int(max(0, count)))
        for index in 0..<count {
            guard let raw = OPENSSL_sk_value(stack, index) else { continue }
            let item = OpaquePointer(raw)
            for extIndex in 0..<X509_REVOKED_get_ext_count(item) {
                guard let ext = X509_REVOKED_get_ext(item, extIndex), X509_EXTENSION_get_critical(ext) != 0 else { continue }
                throw .unsupported("a CRL entry with a critical extension")
            }
            guard let serial = X509_REVOKED_get0_serialNumber(item) else { throw .malformedEncoding("CRL entry serial number") }
            let entry = try Self.entry(item)
            let key = serialKey(serial)
            // A serial listed twice: the stronger statement stands.
            if let earlier = entries[key], earlier == .revoked || entry == .removed { continue }
            entries[key] = entry
        }
        return entries
    }

    private static func entry(_ item: OpaquePointer) throws(CryptoError) -> Entry {
        var critical: Int32 = 0
        guard let raw = X509_REVOKED_get_ext_d2i(item, NID_crl_reason, &critical, nil) else {
            ERR_clear_error()
            if critical == -1 { return .revoked }
            throw .malformedEncoding("CRL entry reason code")
        }
        let reason = raw.assumingMemoryBound(to: ASN1_ENUMERATED.self)
        defer { ASN1_ENUMERATED_free(reason) }
        switch ASN1_ENUMERATED_get(reason) {
        case Int(CRL_REASON_CERTIFICATE_HOLD): return .onHold
        case Int(CRL_REASON_REMOVE_FROM_CRL): return .removed
        default: return .revoked
        }
    }
}

/// A serial number as a dictionary key: its sign and its content octets as
/// OpenSSL decoded them, the same for a certificate and a CRL entry.
func serialKey(_ serial: UnsafePointer<ASN1_INTEGER>) -> [UInt8] {
    [ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER ? 1 : 0] + asn1StringBytes(serial)
}
