import Crypto
import Foundation
import MDoc

extension TestIssuer {
    /// An issuing authority: a self-signed IACA root and a document signer (DS)
    /// it certifies, both on one curve, shaped like ISO 18013-5 Annex B asks
    /// (and like Apple's test issuer): the IACA with keyCertSign|cRLSign, the
    /// DS with digitalSignature, EKU mdlDS (1.0.18013.5.1.2) and CA:false.
    public struct Authority: Sendable {
        public let curve: Curve
        public let name: String
        public let state: String
        public let iacaKey: PrivateKey
        public let iaca: Certificate
        public let documentSignerKey: PrivateKey
        public let documentSigner: Certificate
        /// ES256 on P-256, ES384 on P-384: ISO 18013-5 pairs each curve with one hash.
        public let signatureAlgorithm: COSESignatureAlgorithm
        /// The MSO digest algorithm: P-384 issuers use SHA-384, as real ones do,
        /// so both digest sizes reach the verifier.
        public let digestAlgorithm: HashAlgorithm

        /// What kind of document signer to issue. Only `.valid` verifies; the others
        /// are the `issuer.certificate_invalid` fixtures.
        public enum SignerProfile: Sendable, CaseIterable {
            case valid
            /// Its validity ended 30 days before `now`.
            case expired
            /// No extended key usage extension, so it is not an mdlDS certificate.
            case withoutExtendedKeyUsage
        }

        public init(curve: Curve = .p256, now: Date, name: String = "Veridoc Test", state: String = "CA", signer: SignerProfile = .valid,
                    country: String = "US") throws {
            guard curve == .p256 || curve == .p384 else { throw FixtureError("test authorities use P-256 or P-384") }
            let rootKey = try PrivateKey.generate(curve: curve)
            var root = CertificateBuilder(
                subject: [("C", country), ("ST", state), ("O", name), ("CN", "\(name) IACA \(curve.rawValue)")],
                publicKey: rootKey.publicKey, notBefore: now - 2 * 365 * 86_400, notAfter: now + 10 * 365 * 86_400)
            root.isCA = true
            root.keyUsage = [.keyCertSign, .cRLSign]
            let rootCertificate = try root.selfSigned(with: rootKey)
            try self.init(curve: curve, name: name, state: state, iacaKey: rootKey, iaca: rootCertificate, signer: signer,
                          signerName: [("C", country), ("ST", state)], now: now)
        }

        /// An authority restored from its saved keys and certificates (a load-generator fixture).
        public init(curve: Curve, name: String, state: String, iacaKey: PrivateKey, iaca: Certificate, documentSignerKey: PrivateKey, documentSigner: Certificate) {
            self.curve = curve
            self.name = name
            self.state = state
            self.iacaKey = iacaKey
            self.iaca = iaca
            self.documentSignerKey = documentSignerKey
            self.documentSigner = documentSigner
            signatureAlgorithm = curve == .p384 ? .es384 : .es256
            digestAlgorithm = curve == .p384 ? .sha384 : .sha256
        }

        private init(curve: Curve, name: String, state: String, iacaKey: PrivateKey, iaca: Certificate, signer: SignerProfile,
                     signerName: [(String, String)], now: Date) throws {
            let documentSignerKey = try PrivateKey.generate(curve: curve)
            let validity: (Date, Date) = signer == .expired
                ? (now - 400 * 86_400, now - 30 * 86_400)
                : (now - 90 * 86_400, now + 365 * 86_400)
            var builder = CertificateBuilder(
                subject: signerName + [("O", name), ("CN", "\(name) Document Signer \(curve.rawValue)")],
                publicKey: documentSignerKey.publicKey, notBefore: validity.0, notAfter: validity.1)
            builder.isCA = false
            builder.keyUsage = .digitalSignature
            builder.extendedKeyUsage = signer == .withoutExtendedKeyUsage ? nil : [DocumentSignerProfile.extendedKeyUsage]
            self.init(curve: curve, name: name, state: state, iacaKey: iacaKey, iaca: iaca, documentSignerKey: documentSignerKey,
                      documentSigner: try builder.signed(by: iaca, issuerKey: iacaKey))
        }

        /// The same IACA with a new document signer of `profile`, as when an
        /// issuer rotates (or botches) its DS while relying parties keep the root.
        public func reissuingDocumentSigner(_ profile: SignerProfile, now: Date) throws -> Authority {
            try Authority(curve: curve, name: name, state: state, iacaKey: iacaKey, iaca: iaca, signer: profile,
                          signerName: Self.countryAndState(of: documentSigner), now: now)
        }

        /// The same IACA with a valid document signer whose subject names
        /// `country` and `state` (nil: none) instead of the IACA's: the Annex B
        /// country fixtures (a signer of one country under another's IACA).
        public func reissuingDocumentSigner(country: String?, state: String?, now: Date) throws -> Authority {
            let name = [("C", country), ("ST", state)].compactMap { type, value in value.map { (type, $0) } }
            return try Authority(curve: curve, name: self.name, state: self.state, iacaKey: iacaKey, iaca: iaca, signer: .valid, signerName: name, now: now)
        }

        private static func countryAndState(of certificate: Certificate) -> [(String, String)] {
            certificate.subject.attributes.filter { $0.type == "C" || $0.type == "ST" }.map { ($0.type, $0.value) }
        }
    }
}
