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

    public init(role: Role, certificate: Certificate, issuer: Certificate, location: Result<String, StatusUndetermined>) {
        self.role = role
        self.certificate = certificate
        self.issuer = issuer
        self.location = location
    }

    /// The references of a validated path (signer first, anchor last): one
    /// for each certificate that names CRL distribution points and has an
    /// issuer on the path. A pinned document signer (a path of one) has
    /// none: the tenant trusts it as it is, and its issuer is not known.
    public static func onPath(_ path: [Certificate]) -> [CertificateListReference] {
        guard path.count > 1 else { return [] }
        var references: [CertificateListReference] = []
        for (index, certificate) in path.enumerated() {
            let points: [CRLDistributionPoint]
            let role: Role = index == 0 ? .documentSigner : index == path.count - 1 ? .authority : .intermediate
            switch certificate.facts.crlDistributionPoints {
            case .success(let named): points = named
            case .failure:
                references.append(CertificateListReference(role: role, certificate: certificate, issuer: path[min(index + 1, path.count - 1)],
                    location: .failure(StatusUndetermined(step: "crl_location", detail: "\(role.rawValue)'s CRL distribution points extension does not decode"))))
                continue
            }
            guard !points.isEmpty else { continue }
            let issuer: Certificate
            if index + 1 < path.count {
                issuer = path[index + 1]
            } else if certificate.isSelfIssued {
                issuer = certificate
            } else {
                continue
            }
            references.append(CertificateListReference(role: role, certificate: certificate, issuer: issuer, location: location(in: points, role: role)))
        }
        return references
    }

    /// The first https URI of a complete distribution point, else the first
    /// http one (CRLs are signed, and commonly served over http); other
    /// schemes (ldap, file) are not fetched.
    static func location(in points: [CRLDistributionPoint], role: Role) -> Result<String, StatusUndetermined> {
        var http: String?
        for point in points where !point.isPartial {
            for uri in point.uris {
                if hasScheme(uri, "https:") { return .success(uri) }
                if http == nil, hasScheme(uri, "http:") { http = uri }
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
