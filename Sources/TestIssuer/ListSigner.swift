import Crypto
import Foundation
import MDoc

extension TestIssuer {
    /// A key and the certificate an IACA issued for it, to sign status and
    /// identifier lists with.
    public struct ListSigner: Sendable {
        public let key: PrivateKey
        public let certificate: Certificate

        public init(key: PrivateKey, certificate: Certificate) {
            self.key = key
            self.certificate = certificate
        }
    }
}

extension TestIssuer.Authority {
    /// A list signer certified by this authority's IACA, shaped like its
    /// document signer: digitalSignature, CA:false, and by default the mdlDS
    /// extended key usage (1.0.18013.5.1.2), which Veridoc accepts for list
    /// signers while no dedicated one is assigned. The other parameters make
    /// the certificates a list signer must not be (no EKU, a CA, expired).
    public func issuingListSigner(now: Date, extendedKeyUsage: [String]? = [DocumentSignerProfile.extendedKeyUsage],
                                  keyUsage: KeyUsage = .digitalSignature, isCA: Bool = false,
                                  validity: ClosedRange<Date>? = nil) throws -> TestIssuer.ListSigner {
        let key = try PrivateKey.generate(curve: curve)
        let window = validity ?? (now - 90 * 86_400)...(now + 365 * 86_400)
        let country = iaca.subject.attributes.filter { $0.type == "C" || $0.type == "ST" }.map { ($0.type, $0.value) }
        var builder = CertificateBuilder(
            subject: country + [("O", name), ("CN", "\(name) List Signer \(curve.rawValue)")],
            publicKey: key.publicKey, notBefore: window.lowerBound, notAfter: window.upperBound)
        builder.isCA = isCA
        builder.keyUsage = keyUsage
        builder.extendedKeyUsage = extendedKeyUsage
        return TestIssuer.ListSigner(key: key, certificate: try builder.signed(by: iaca, issuerKey: iacaKey))
    }
}
