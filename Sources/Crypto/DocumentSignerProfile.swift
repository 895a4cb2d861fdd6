/// ISO/IEC 18013-5 Annex B profile checks for a document-signer (DS) certificate,
/// on top of the RFC 5280 path validation `TrustStore` does.
public enum DocumentSignerProfile {
    /// The `id-mdl-kp-mdlDS` extended key usage (18013-5 Annex B.1.4).
    public static let extendedKeyUsage = "1.0.18013.5.1.2"

    /// What an issuer's end-entity signer (a document signer, a status list
    /// signer) must be besides its extended key usage: a key for
    /// digitalSignature, not for certificates, and not a CA.
    public static func signingUsageViolations(of certificate: Certificate, role: String) -> [String] {
        var violations: [String] = []
        if let usage = certificate.keyUsage {
            if !usage.contains(.digitalSignature) { violations.append("key usage lacks digitalSignature") }
            if usage.contains(.keyCertSign) { violations.append("key usage includes keyCertSign, which a \(role) must not have") }
        } else {
            violations.append("key usage extension missing (must include digitalSignature)")
        }
        if certificate.basicConstraints?.isCA == true {
            violations.append("basic constraints mark the certificate as a CA")
        }
        return violations
    }

    /// Human-readable profile violations; empty when the certificate conforms.
    /// Country, IssuerAltName and CRL distribution points are not required:
    /// Apple's test document signer has none of them and is accepted.
    public static func violations(of certificate: Certificate) -> [String] {
        var violations: [String] = []
        if let usages = certificate.extendedKeyUsage {
            if !usages.contains(extendedKeyUsage) {
                violations.append("extended key usage does not include \(extendedKeyUsage) (mdlDS)")
            }
        } else {
            violations.append("extended key usage extension missing (must include \(extendedKeyUsage))")
        }
        violations += signingUsageViolations(of: certificate, role: "document signer")
        do {
            _ = try certificate.publicKey()
        } catch {
            violations.append("public key is not EC P-256, P-384, P-521 or Ed25519")
        }
        return violations
    }
}
