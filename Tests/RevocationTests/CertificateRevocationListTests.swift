import Crypto
import Foundation
import TestIssuer
import Testing

/// The CRL reader on its own: what a CRL says of a certificate, who signed
/// it, and every CRL it refuses to read (RFC 5280 §5, §6.3.3).
@Suite struct CertificateRevocationListTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    let authority: TestIssuer.Authority

    init() throws { authority = try TestIssuer.Authority(now: Self.now) }

    func crl(_ entries: [CertificateRevocationListBuilder.Entry] = [], nextUpdate: Date? = now + 86_400, key: PrivateKey? = nil,
             edit: (inout CertificateRevocationListBuilder) -> Void = { _ in }) throws -> [UInt8] {
        try authority.revocationList(entries, thisUpdate: Self.now - 60, nextUpdate: nextUpdate, key: key, edit: edit)
    }

    @Test func entriesSayRevokedOnHoldOrNothing() throws {
        let other = try authority.reissuingDocumentSigner(.valid, now: Self.now).documentSigner
        let third = try authority.reissuingDocumentSigner(.valid, now: Self.now).documentSigner
        let list = try CertificateRevocationList(der: try crl([.init(authority.documentSigner, reason: 1), .init(other, reason: 6)]))
        #expect(try list.entry(for: authority.documentSigner) == .revoked)
        #expect(try list.entry(for: other) == .onHold)
        #expect(try list.entry(for: third) == nil)
        #expect(list.count == 2)
        #expect(list.thisUpdate == Self.now - 60 && list.nextUpdate == Self.now + 86_400)
        // No reason code at all is revoked; removeFromCRL belongs to delta CRLs.
        let plain = try CertificateRevocationList(der: try crl([.init(third), .init(other, reason: 8)]))
        #expect(try plain.entry(for: third) == .revoked)
        #expect(try plain.entry(for: other) == .removed)
    }

    @Test func theSignatureAndIssuerAreTheIACAs() throws {
        let list = try CertificateRevocationList(der: try crl())
        #expect(list.isIssued(by: authority.iaca))
        #expect(list.verifySignature(with: authority.iacaKey.publicKey))
        #expect(!list.verifySignature(with: authority.documentSignerKey.publicKey))
        let stranger = try TestIssuer.Authority(now: Self.now, name: "Other Issuer", state: "NV")
        #expect(!list.isIssued(by: stranger.iaca))
        let forged = try CertificateRevocationList(der: try crl(key: stranger.iacaKey))
        #expect(!forged.verifySignature(with: authority.iacaKey.publicKey))
    }

    @Test func crlsThatCannotBeHonouredAreRefused() throws {
        #expect(throws: CryptoError.unsupported("a CRL without nextUpdate")) { try CertificateRevocationList(der: try crl(nextUpdate: nil)) }
        #expect(throws: CryptoError.unsupported("a delta CRL")) {
            try CertificateRevocationList(der: try crl { $0.extraExtensions = [(TestIssuer.Authority.deltaCRLIndicatorOID, true, [0x02, 0x01, 0x05])] })
        }
        #expect(throws: CryptoError.unsupported("a critical CRL extension 1.3.6.1.4.1.99999.2")) {
            try CertificateRevocationList(der: try crl { $0.extraExtensions = [("1.3.6.1.4.1.99999.2", true, [0x05, 0x00])] })
        }
        #expect(throws: CryptoError.unsupported("a CRL entry with a critical extension")) {
            try CertificateRevocationList(der: try crl([.init(authority.documentSigner, criticalExtension: true)]))
        }
        // A non-critical unknown extension is ignored.
        _ = try CertificateRevocationList(der: try crl { $0.extraExtensions = [("1.3.6.1.4.1.99999.2", false, [0x05, 0x00])] })
    }

    @Test func malformedBytesAreRefused() throws {
        let good = try crl([.init(authority.documentSigner)])
        for bad in [[], [0x30], Array(good.dropLast()), good + [0x00], Array(repeating: 0x30, count: 64), Array("not a crl".utf8)] as [[UInt8]] {
            #expect(throws: CryptoError.self) { try CertificateRevocationList(der: bad) }
        }
        // A certificate is not a CRL.
        #expect(throws: CryptoError.self) { try CertificateRevocationList(der: authority.iaca.der) }
    }

    @Test func theIssuingDistributionPointLimitsWhatItSpeaksFor() throws {
        let uri = "https://crl.example/iaca.crl"
        let scoped = try CertificateRevocationList(der: try crl { $0.extraExtensions = [(TestIssuer.Authority.issuingDistributionPointOID, true,
                                                                                        TestIssuer.issuingDistributionPointExtension([uri], onlyCA: true))] })
        #expect(scoped.scope == .init(distributionPointURIs: [uri], onlyUserCertificates: false, onlyCACertificates: true))
        #expect(scoped.scopeProblem(for: authority.iaca, pointNames: [uri]) == nil)
        #expect(scoped.scopeProblem(for: authority.documentSigner, pointNames: [uri]) != nil, "a CA-only CRL says nothing of a document signer")
        #expect(scoped.scopeProblem(for: authority.iaca, pointNames: ["https://crl.example/other.crl"]) != nil)
        // Any name of the certificate's point may match, scheme and host without case, the path exactly.
        #expect(scoped.scopeProblem(for: authority.iaca, pointNames: ["http://crl.example/iaca.crl", "HTTPS://CRL.Example/iaca.crl"]) == nil)
        #expect(scoped.scopeProblem(for: authority.iaca, pointNames: ["https://crl.example/IACA.crl"]) != nil)
        let users = try CertificateRevocationList(der: try crl { $0.extraExtensions = [(TestIssuer.Authority.issuingDistributionPointOID, true,
                                                                                       TestIssuer.issuingDistributionPointExtension([], onlyUser: true))] })
        #expect(users.scopeProblem(for: authority.documentSigner, pointNames: [uri]) == nil)
        #expect(users.scopeProblem(for: authority.iaca, pointNames: [uri]) != nil)
    }

    @Test func distributionPointsAreReadFromCertificates() throws {
        #expect(try authority.documentSigner.crlDistributionPoints().isEmpty)
        let named = try authority.namingRevocationLists(iaca: ["https://a.example/iaca.crl", "ldap://a.example/cn=crl"], documentSigner: ["http://a.example/ds.crl"])
        #expect(try named.iaca.crlDistributionPoints() == [CRLDistributionPoint(uris: ["https://a.example/iaca.crl", "ldap://a.example/cn=crl"], isPartial: false)])
        #expect(try named.documentSigner.crlDistributionPoints() == [CRLDistributionPoint(uris: ["http://a.example/ds.crl"], isPartial: false)])
        let partial = try authority.namingRevocationLists(documentSigner: ["https://a.example/ds.crl"], partial: true)
        #expect(try partial.documentSigner.crlDistributionPoints() == [CRLDistributionPoint(uris: ["https://a.example/ds.crl"], isPartial: true)])
        // An extension that does not decode is an error, not "no CRL".
        var builder = CertificateBuilder(subject: [("CN", "Broken")], publicKey: authority.documentSignerKey.publicKey, notBefore: Self.now - 60, notAfter: Self.now + 60)
        builder.extraExtensions = [("2.5.29.31", false, [0x30, 0x03, 0x02, 0x01, 0x01])]
        let broken = try builder.signed(by: authority.iaca, issuerKey: authority.iacaKey)
        #expect(throws: CryptoError.self) { try broken.crlDistributionPoints() }
    }

    @Test func aSerialListedTwiceSaysTheStrongerThing() throws {
        let held = try authority.reissuingDocumentSigner(.valid, now: Self.now).documentSigner
        let list = try CertificateRevocationList(der: try crl([.init(held, reason: 6), .init(held, reason: 1), .init(authority.documentSigner, reason: 8),
                                                               .init(authority.documentSigner, reason: 6)]))
        #expect(list.count == 2)
        #expect(try list.entry(for: held) == .revoked, "revoked outweighs on hold, in either order")
        #expect(try list.entry(for: authority.documentSigner) == .onHold, "on hold outweighs removeFromCRL")
    }
}
