import Crypto

/// A certificate on a document's validated path that names CRL distribution
/// points (RFC 5280 §4.2.1.13): its issuer's CRL must not list it. The
/// document signer's CRL is signed by the IACA that issued it; the IACA's
/// own, by the IACA itself.
public struct CertificateListReference: Sendable {
    /// Which certificate of the path, for details (never its name or serial).
    public enum Role: String, Sendable {
        case documentSigner = "the document signer"
        case intermediate = "an intermediate certificate"
        case authority = "the IACA"
    }

    public let role: Role
    public let certificate: Certificate
    /// Who must have signed the CRL: the next certificate on the path, or the IACA itself.
    public let issuer: Certificate
    /// The URI its CRL is fetched from, or why no CRL can be had.
    public let location: Result<String, StatusUndetermined>
    /// Every URI of the distribution point `location` was chosen from: a
    /// CRL's issuing distribution point may name any of them (RFC 5280
    /// §6.3.3 (b)(2)(i)).
    public let distributionPointNames: [String]

    public init(role: Role, certificate: Certificate, issuer: Certificate, location: Result<String, StatusUndetermined>,
                distributionPointNames: [String] = []) {
        self.role = role
        self.certificate = certificate
        self.issuer = issuer
        self.location = location
        self.distributionPointNames = distributionPointNames
    }

    /// The references of a validated path (signer first, anchor last): one
    /// for each certificate that names CRL distribution points and has an
    /// issuer on the path. A certificate issued by the anchor that names
    /// none is looked up in the CRL the anchor names for itself, when it
    /// names one: that is the complete CRL of the certificate's own issuer,
    /// fetched anyway, and a signer left off it must not pass unread. A
    /// pinned document signer (a path of one) has none: the tenant trusts
    /// it as it is, and its issuer is not known.
    public static func onPath(_ path: [Certificate]) -> [CertificateListReference] {
        guard path.count > 1 else { return [] }
        let anchor = path[path.count - 1]
        var references: [CertificateListReference] = []
        for (index, certificate) in path.enumerated() {
            let role: Role = index == 0 ? .documentSigner : index == path.count - 1 ? .authority : .intermediate
            let isAnchor = index == path.count - 1
            // Its issuer: the next certificate, or the anchor itself when self-issued.
            guard !isAnchor || certificate.isSelfIssued else { continue }
            let issuer = isAnchor ? certificate : path[index + 1]
            switch certificate.facts.crlDistributionPoints {
            case .failure:
                references.append(CertificateListReference(role: role, certificate: certificate, issuer: issuer,
                    location: .failure(StatusUndetermined(step: "crl_location", detail: "\(role.rawValue)'s CRL distribution points extension does not decode"))))
            case .success(let points) where !points.isEmpty:
                references.append(reference(role, certificate, issuer: issuer, points: points))
            case .success:
                // Issued by a self-issued anchor that names its own CRL: read there.
                guard index + 1 == path.count - 1, anchor.isSelfIssued, case .success(let anchorPoints) = anchor.facts.crlDistributionPoints,
                      !anchorPoints.isEmpty
                else { continue }
                references.append(reference(role, certificate, issuer: anchor, points: anchorPoints))
            }
        }
        return references
    }

    private static func reference(_ role: Role, _ certificate: Certificate, issuer: Certificate, points: [CRLDistributionPoint]) -> CertificateListReference {
        switch location(in: points, role: role) {
        case .success(let (uri, names)):
            return CertificateListReference(role: role, certificate: certificate, issuer: issuer, location: .success(uri), distributionPointNames: names)
        case .failure(let cause):
            return CertificateListReference(role: role, certificate: certificate, issuer: issuer, location: .failure(cause))
        }
    }

    /// The first https URI of a complete distribution point, else the first
    /// http one (CRLs are signed, and commonly served over http), with the
    /// other names of its point; other schemes (ldap, file) are not fetched.
    static func location(in points: [CRLDistributionPoint], role: Role) -> Result<(String, [String]), StatusUndetermined> {
        var http: (String, [String])?
        for point in points where !point.isPartial {
            for uri in point.uris {
                if hasScheme(uri, "https:") { return .success((uri, point.uris)) }
                if http == nil, hasScheme(uri, "http:") { http = (uri, point.uris) }
            }
        }
        if let http { return .success(http) }
        return .failure(StatusUndetermined(step: "crl_location",
                                           detail: "\(role.rawValue) names CRL distribution points, none a complete CRL at an http or https URI"))
    }

    /// Whether `uri` starts with `scheme` (lowercase, with its colon), in any case.
    private static func hasScheme(_ uri: String, _ scheme: StaticString) -> Bool {
        let prefix = UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount)
        var bytes = uri.utf8.makeIterator()
        for expected in prefix {
            guard let byte = bytes.next(), byte | (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0) == expected else { return false }
        }
        return true
    }
}
