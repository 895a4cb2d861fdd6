import COpenSSL

/// One entry of a certificate's CRL distribution points extension (RFC 5280
/// §4.2.1.13): where the CRL that covers the certificate is published.
public struct CRLDistributionPoint: Sendable, Equatable {
    /// The `uniformResourceIdentifier` names of its `fullName`, in order.
    /// Other name forms (directory names, a name relative to the issuer) are
    /// not locations Veridoc can fetch and are left out.
    public let uris: [String]
    /// Whether the point names only some revocation reasons (`reasons`) or
    /// another CRL issuer (`cRLIssuer`, an indirect CRL): its CRL is then not
    /// the complete statement of the certificate's own issuer.
    public let isPartial: Bool

    public init(uris: [String], isPartial: Bool) {
        self.uris = uris
        self.isPartial = isPartial
    }
}

extension Certificate {
    /// The CRL distribution points the certificate names; empty when it
    /// names none. A present extension that does not decode (or appears
    /// twice) throws: the issuer asked for a CRL check that cannot be made.
    public func crlDistributionPoints() throws(CryptoError) -> [CRLDistributionPoint] {
        guard let stack = try decodedExtension(NID_crl_distribution_points, "CRL distribution points extension") else { return [] }
        defer { CRL_DIST_POINTS_free(stack) }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index -> CRLDistributionPoint? in
            guard let point = OPENSSL_sk_value(stack, index)?.assumingMemoryBound(to: DIST_POINT.self).pointee else { return nil }
            var uris: [String] = []
            if let name = point.distpoint?.pointee, name.type == 0, let names = name.name.fullname {
                uris = uniformResourceIdentifiers(names)
            }
            return CRLDistributionPoint(uris: uris, isPartial: point.reasons != nil || point.CRLissuer != nil)
        }
    }
}

extension Certificate {
    /// The subject alternative name's dNSName entries, in order; empty when
    /// the certificate has none. A present extension that does not decode
    /// (or appears twice) throws, as for CRL distribution points.
    public func dnsNames() throws(CryptoError) -> [String] {
        guard let names = try decodedExtension(NID_subject_alt_name, "subject alternative name extension") else { return [] }
        defer { GENERAL_NAMES_free(names) }
        return generalNames(names, type: GEN_DNS)
    }

    /// Extension `nid` decoded (the caller frees it with the type's free
    /// function); nil when absent. Present more than once, or present and
    /// undecodable, throws.
    private func decodedExtension(_ nid: Int32, _ name: String) throws(CryptoError) -> OpaquePointer? {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(handle.pointer, nid, &critical, nil) else {
            ERR_clear_error()
            // -1: absent. -2: present more than once. 0/1: present but undecodable.
            if critical == -1 { return nil }
            throw .malformedEncoding(name)
        }
        return OpaquePointer(raw)
    }
}

/// The URI entries of a GENERAL_NAMES stack, as text.
func uniformResourceIdentifiers(_ names: OpaquePointer) -> [String] {
    generalNames(names, type: GEN_URI)
}

/// The IA5String entries of `type` (GEN_URI, GEN_DNS) in a GENERAL_NAMES
/// stack, as text; names that are not printable ASCII (an IA5String may
/// hold control bytes) are left out.
private func generalNames(_ names: OpaquePointer, type: Int32) -> [String] {
    (0..<OPENSSL_sk_num(names)).compactMap { index in
        // uniformResourceIdentifier and dNSName are the same union member's IA5String.
        guard let name = OPENSSL_sk_value(names, index)?.assumingMemoryBound(to: GENERAL_NAME.self).pointee,
              name.type == type, let text = name.d.ia5
        else { return nil }
        let bytes = asn1StringBytes(UnsafePointer(text))
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
