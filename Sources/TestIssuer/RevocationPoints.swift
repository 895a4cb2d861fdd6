import Crypto
import Foundation

extension TestIssuer {
    /// The DER of a CRL distribution points extension (RFC 5280 §4.2.1.13):
    /// one distribution point per element of `points`, each a `fullName` of
    /// those URIs; `partial` adds `reasons` (keyCompromise only) to each,
    /// which makes it a point Veridoc does not use.
    public static func crlDistributionPointsExtension(_ points: [[String]], partial: Bool = false) -> [UInt8] {
        DER.sequence(points.map { uris in
            let fullName = DER.tagged(0xA0, uris.map { DER.tagged(0x86, Array($0.utf8)) }.joined())
            var content = DER.tagged(0xA0, fullName)
            // reasons [1] BIT STRING, implicit: one unused bit… keyCompromise is bit 1.
            if partial { content += [0x81, 0x02, 0x06, 0x40] }
            return DER.sequence([content])
        })
    }

    /// The DER of an issuing distribution point extension (RFC 5280 §5.2.5)
    /// naming `uris`, optionally for end-entity or CA certificates only.
    public static func issuingDistributionPointExtension(_ uris: [String], onlyUser: Bool = false, onlyCA: Bool = false) -> [UInt8] {
        var content: [UInt8] = []
        if !uris.isEmpty {
            content += DER.tagged(0xA0, DER.tagged(0xA0, uris.map { DER.tagged(0x86, Array($0.utf8)) }.joined()))
        }
        if onlyUser { content += [0x81, 0x01, 0xFF] }
        if onlyCA { content += [0x82, 0x01, 0xFF] }
        return DER.sequence([content])
    }
}

extension TestIssuer.Authority {
    /// The same keys, with certificates that name CRL distribution points:
    /// the IACA re-issued (same key, same name) naming `iaca`, and a new
    /// document signer under it naming `documentSigner`. Empty: none.
    public func namingRevocationLists(iaca iacaPoints: [String] = [], documentSigner signerPoints: [String] = [], partial: Bool = false) throws -> TestIssuer.Authority {
        var root = CertificateBuilder(subject: iaca.subject.attributes.map { ($0.type, $0.value) }, publicKey: iacaKey.publicKey,
                                      notBefore: iaca.notBefore, notAfter: iaca.notAfter)
        root.isCA = true
        root.keyUsage = [.keyCertSign, .cRLSign]
        if !iacaPoints.isEmpty {
            root.extraExtensions = [(Self.crlDistributionPointsOID, false, TestIssuer.crlDistributionPointsExtension([iacaPoints], partial: partial))]
        }
        let newRoot = try root.selfSigned(with: iacaKey)
        var signer = CertificateBuilder(subject: documentSigner.subject.attributes.map { ($0.type, $0.value) }, publicKey: documentSignerKey.publicKey,
                                        notBefore: documentSigner.notBefore, notAfter: documentSigner.notAfter)
        signer.isCA = false
        signer.keyUsage = .digitalSignature
        signer.extendedKeyUsage = [DocumentSignerProfile.extendedKeyUsage]
        if !signerPoints.isEmpty {
            signer.extraExtensions = [(Self.crlDistributionPointsOID, false, TestIssuer.crlDistributionPointsExtension([signerPoints], partial: partial))]
        }
        return TestIssuer.Authority(curve: curve, name: name, state: state, iacaKey: iacaKey, iaca: newRoot, documentSignerKey: documentSignerKey,
                                    documentSigner: try signer.signed(by: newRoot, issuerKey: iacaKey))
    }

    /// A CRL in the IACA's name listing `entries`, signed by the IACA's key
    /// (or `key`, for a forgery); `edit` adjusts it before signing.
    public func revocationList(_ entries: [CertificateRevocationListBuilder.Entry] = [], thisUpdate: Date, nextUpdate: Date?, key: PrivateKey? = nil,
                               edit: (inout CertificateRevocationListBuilder) -> Void = { _ in }) throws -> [UInt8] {
        var builder = CertificateRevocationListBuilder(thisUpdate: thisUpdate, nextUpdate: nextUpdate)
        builder.entries = entries
        edit(&builder)
        return try builder.signed(as: iaca, with: key ?? iacaKey)
    }

    static let crlDistributionPointsOID = "2.5.29.31"
    /// RFC 5280 §5.2.5.
    public static let issuingDistributionPointOID = "2.5.29.28"
    /// RFC 5280 §5.2.4.
    public static let deltaCRLIndicatorOID = "2.5.29.27"
}

/// The few DER forms the extensions above need.
enum DER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func tagged(_ tag: UInt8, _ content: some Collection<UInt8>) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    static func sequence(_ items: [[UInt8]]) -> [UInt8] {
        tagged(0x30, items.joined())
    }
}
