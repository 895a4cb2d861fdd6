import COpenSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Owns one `X509_CRL` for the length of a call and frees it.
private final class X509CRLHandle {
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
/// serial number, so that a lookup per event reads a dictionary. OpenSSL's
/// own form of a CRL takes several times its size in memory, so it is not
/// kept: the entries are, a few dozen bytes each, and the DER, parsed again
/// for the rare signature and issuer checks (once per issuer, then
/// remembered).
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
    /// About how many bytes it holds in memory.
    public var memoryBytes: Int { der.count + entries.capacity * (MemoryLayout<SerialNumber>.stride + 8) }
    private let entries: [SerialNumber: Entry]

    public init(der input: some Collection<UInt8>) throws(CryptoError) {
        let bytes = Array(input)
        let parsed = try decodeDER(bytes, what: "CRL DER", free: X509_CRL_free) { d2i_X509_CRL(nil, &$0, $1) }
        let handle = X509CRLHandle(taking: parsed)
        guard let thisUpdate = X509_CRL_get0_lastUpdate(parsed).flatMap(dateFromASN1Time) else { throw .malformedEncoding("CRL thisUpdate") }
        guard let next = X509_CRL_get0_nextUpdate(parsed) else { throw .unsupported("a CRL without nextUpdate") }
        guard let nextUpdate = dateFromASN1Time(next) else { throw .malformedEncoding("CRL nextUpdate") }
        scope = try Self.readScope(parsed)
        entries = try Self.readEntries(parsed)
        withExtendedLifetime(handle) {}
        self.der = bytes
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }

    /// Whether the CRL names `certificate`'s subject as its issuer (RFC 5280
    /// §6.3.3 (b): the CRL issuer must be the certificate's issuer).
    public func isIssued(by certificate: Certificate) -> Bool {
        parsed { X509_NAME_cmp(X509_CRL_get_issuer($0), X509_get_subject_name(certificate.handle.pointer)) == 0 } ?? false
    }

    /// Whether the CRL's signature verifies with `key`.
    public func verifySignature(with key: PublicKey) -> Bool {
        guard let evp = try? key.evpKey() else { return false }
        return parsed { crl in
            guard X509_CRL_verify(crl, evp.pointer) == 1 else {
                ERR_clear_error()
                return false
            }
            return true
        } ?? false
    }

    /// `body` of the CRL parsed again from its DER (which parsed once, in `init`).
    private func parsed<T>(_ body: (OpaquePointer) -> T) -> T? {
        guard let crl = try? decodeDER(der, what: "CRL DER", free: X509_CRL_free, { d2i_X509_CRL(nil, &$0, $1) }) else { return nil }
        let handle = X509CRLHandle(taking: crl)
        return withExtendedLifetime(handle) { body(handle.pointer) }
    }

    /// Why the CRL, fetched from the distribution point whose names are
    /// `pointNames`, does not speak for `certificate` (RFC 5280 §6.3.3
    /// (b)(2)); nil when it does. Names match when equal with the scheme
    /// and host compared without case.
    public func scopeProblem(for certificate: Certificate, pointNames: [String]) -> String? {
        if let names = scope.distributionPointURIs {
            let wanted = Set(pointNames.map(Self.comparable))
            guard names.contains(where: { wanted.contains(Self.comparable($0)) }) else {
                return "the CRL's issuing distribution point is not the one the certificate names"
            }
        }
        guard scope.onlyUserCertificates || scope.onlyCACertificates else { return nil }
        let isCA = certificate.basicConstraints?.isCA == true
        if scope.onlyUserCertificates && isCA { return "the CRL covers end-entity certificates only, and this certificate is a CA" }
        if scope.onlyCACertificates && !isCA { return "the CRL covers CA certificates only, and this certificate is not a CA" }
        return nil
    }

    /// `uri` with its scheme and authority lowercased, the rest as it is.
    static func comparable(_ uri: String) -> String {
        guard let schemeEnd = uri.range(of: "://") else { return uri }
        let rest = uri[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        return uri[..<schemeEnd.upperBound].lowercased() + rest[..<authorityEnd].lowercased() + rest[authorityEnd...]
    }

    /// What the CRL says of `certificate`'s serial number: its entry, or nil
    /// when it is not listed; throws for a serial longer than a CRL Veridoc
    /// reads may hold (RFC 5280 §4.1.2.2 allows 20 octets), of which no
    /// statement can be made.
    public func entry(for certificate: Certificate) throws(CryptoError) -> Entry? {
        guard let serial = SerialNumber(certificate.facts.revocationSerial) else {
            throw .unsupported("a serial number longer than \(SerialNumber.maxOctets) octets")
        }
        return entries[serial]
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

    private static func readEntries(_ crl: OpaquePointer) throws(CryptoError) -> [SerialNumber: Entry] {
        guard let revoked = X509_CRL_get_REVOKED(crl) else { return [:] }
        let stack = revoked
        let count = OPENSSL_sk_num(stack)
        var entries: [SerialNumber: Entry] = [:]
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
            guard let key = SerialNumber(serialKey(serial)) else {
                throw .unsupported("a CRL entry whose serial number is longer than \(SerialNumber.maxOctets) octets")
            }
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

/// A serial number as a CRL's dictionary keys it: the sign and content
/// octets `serialKey` gives, packed into three words, so that an entry
/// costs no allocation of its own.
struct SerialNumber: Hashable, Sendable {
    /// Content octets it holds beside the sign: RFC 5280's 20, and a little room for issuers that pad.
    static let maxOctets = 23
    private let words: (UInt64, UInt64, UInt64)
    private let length: UInt8

    /// nil when `key` (sign byte, then content) is longer than it holds.
    init?(_ key: [UInt8]) {
        guard !key.isEmpty, key.count <= Self.maxOctets + 1 else { return nil }
        var packed: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for (index, byte) in key.enumerated() {
            let shifted = UInt64(byte) << (8 * UInt64(index % 8))
            switch index / 8 {
            case 0: packed.0 |= shifted
            case 1: packed.1 |= shifted
            default: packed.2 |= shifted
            }
        }
        words = packed
        length = UInt8(key.count)
    }

    static func == (lhs: SerialNumber, rhs: SerialNumber) -> Bool {
        lhs.length == rhs.length && lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(length)
    }
}

/// A serial number as sign and content octets, as OpenSSL decoded it: the
/// same for a certificate and a CRL entry.
func serialKey(_ serial: UnsafePointer<ASN1_INTEGER>) -> [UInt8] {
    [ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER ? 1 : 0] + asn1StringBytes(serial)
}
