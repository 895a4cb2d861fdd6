import CBOR
import Crypto
import Foundation
import MDoc

extension TestIssuer {
    /// A VICAL publisher: a root the relying party trusts for the list, and a
    /// signer it certifies, which signs VICALs (ISO 18013-5 2nd ed. / AAMVA
    /// shape: a COSE_Sign1 whose payload lists `certificateInfos`).
    public struct TrustList: Sendable {
        public let rootKey: PrivateKey
        /// What a tenant lists under `vicals[].anchors`.
        public let root: Certificate
        public let signerKey: PrivateKey
        public let signer: Certificate

        public init(now: Date, name: String = "Veridoc Test VICAL") throws {
            rootKey = try PrivateKey.generate(curve: .p256)
            var rootBuilder = CertificateBuilder(
                subject: [("C", "US"), ("O", name), ("CN", "\(name) Root")], publicKey: rootKey.publicKey,
                notBefore: now - 2 * 365 * 86_400, notAfter: now + 10 * 365 * 86_400)
            rootBuilder.isCA = true
            rootBuilder.keyUsage = [.keyCertSign, .cRLSign]
            root = try rootBuilder.selfSigned(with: rootKey)
            signerKey = try PrivateKey.generate(curve: .p256)
            var signerBuilder = CertificateBuilder(
                subject: [("C", "US"), ("O", name), ("CN", "\(name) Signer")], publicKey: signerKey.publicKey,
                notBefore: now - 365 * 86_400, notAfter: now + 2 * 365 * 86_400)
            signerBuilder.isCA = false
            signerBuilder.keyUsage = .digitalSignature
            signer = try signerBuilder.signed(by: root, issuerKey: rootKey)
        }

        /// One `certificateInfos` entry: `docTypes` nil leaves `docType` out
        /// (the IACA is then a trust point for every docType); `docTypeItems`
        /// writes the member as given instead (hostile lists).
        public struct Entry: Sendable {
            public var certificate: Certificate
            public var docTypes: [String]?
            public var docTypeItems: CBOR?

            public init(_ certificate: Certificate, docTypes: [String]?) {
                self.certificate = certificate
                self.docTypes = docTypes
            }
        }

        /// The signed VICAL, as a publisher distributes it (CBOR, untagged COSE_Sign1).
        /// `nextUpdate` nil leaves the member out.
        public func vical(_ entries: [Entry], date: Date, nextUpdate: Date?, issueID: Int64 = 1) throws -> [UInt8] {
            func tdate(_ date: Date) -> CBOR { .tagged(0, .text(RFC3339.string(from: date))) }
            let infos: [CBOR] = entries.map { entry in
                var info: [CBOR.MapEntry] = [CBOR.MapEntry("certificate", .bytes(entry.certificate.der))]
                if let items = entry.docTypeItems {
                    info.append(CBOR.MapEntry("docType", items))
                } else if let docTypes = entry.docTypes {
                    info.append(CBOR.MapEntry("docType", .array(docTypes.map(CBOR.text))))
                }
                return .map(info)
            }
            var payload: [CBOR.MapEntry] = [
                CBOR.MapEntry("version", "1.0"), CBOR.MapEntry("vicalProvider", "Veridoc Test"), CBOR.MapEntry("date", tdate(date)),
                CBOR.MapEntry("vicalIssueID", .int(issueID)),
            ]
            if let nextUpdate { payload.append(CBOR.MapEntry("nextUpdate", tdate(nextUpdate))) }
            payload.append(CBOR.MapEntry("certificateInfos", .array(infos)))
            let message = try COSESign1.sign(
                payload: CBOR.map(payload).encoded(), key: signerKey, algorithm: .es256, unprotected: [CBOR.MapEntry(33, .bytes(signer.der))])
            return message.encoded()
        }
    }
}
