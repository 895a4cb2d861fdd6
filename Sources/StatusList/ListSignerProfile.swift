import Crypto

/// What a certificate must be to sign status or identifier lists for an
/// issuer (other than the document signer itself, which may always sign
/// for its own documents): an end entity with digitalSignature and an
/// extended key usage that delegates list signing.
///
/// Which EKU: ISO 18013-5 2nd edition §12.3.6 was not available, and no
/// public implementation read here (multipaz, mdoc-ts) names or checks a
/// list-signer EKU; mdoc-ts validates the list's x5chain against the mdoc
/// trust anchors and nothing more. The Token Status List draft (-20,
/// "X.509 Certificate Extended Key Usage Extension") defines
/// `id-kp-oauthStatusSigning`, but its number (1.3.6.1.5.5.7.3.TBD) is not
/// assigned yet, so no certificate can carry it. Until one is, the accepted
/// purpose is the mdoc document signer's (`id-mdl-kp-mdlDS`,
/// 1.0.18013.5.1.2, Annex B.1.4): a key the IACA trusts to sign MSOs for
/// its documents is trusted to say which of them are revoked. That is what
/// the derived identifier-list vectors' signer carries. When IANA assigns
/// the draft's OID it belongs in `extendedKeyUsages`.
public enum ListSignerProfile {
    /// Any one of these makes a certificate a list signer.
    public static let extendedKeyUsages: [String] = [DocumentSignerProfile.extendedKeyUsage]

    /// Why `certificate` may not sign lists; empty when it may.
    public static func violations(of certificate: Certificate) -> [String] {
        var violations: [String] = []
        if let usages = certificate.extendedKeyUsage {
            if !usages.contains(where: extendedKeyUsages.contains) {
                violations.append("extended key usage names none of \(extendedKeyUsages.joined(separator: ", "))")
            }
        } else {
            violations.append("no extended key usage extension (must name one of \(extendedKeyUsages.joined(separator: ", ")))")
        }
        return violations + DocumentSignerProfile.signingUsageViolations(of: certificate, role: "list signer")
    }
}
