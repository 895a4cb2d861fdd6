import Crypto
import Foundation
import MDoc
import StatusList
import TestIssuer
import Testing

/// `ListSignerRule`: which certificate may sign the list a document names.
struct ListSignerRuleTests {
    func token(_ world: ListWorld, _ kind: TestIssuer.ListPublisher.Kind, signedBy key: PrivateKey, chain: [Certificate]) throws -> ListToken {
        let content: TestIssuer.ListPublisher.Content = kind == .statusList ? .statuses(bits: 1, [0, 1]) : .identifiers([[5, 5]])
        let bytes = try world.publisher(kind, content).signed(by: key, chain: chain)
        return try ListToken(bytes: bytes, kind: kind == .statusList ? .statusList : .identifierList)
    }

    /// A list signer the document's IACA issued, named by x5chain; or the
    /// document signer itself, which may sign lists for its own documents.
    @Test(arguments: TestIssuer.ListPublisher.Kind.allCases, [false, true])
    func aListSignerOrTheDocumentSignerItself(kind: TestIssuer.ListPublisher.Kind, byDocumentSigner: Bool) throws {
        let world = try ListWorld()
        let (key, certificate) = byDocumentSigner
            ? (world.authority.documentSignerKey, world.authority.documentSigner)
            : (world.listSigner.key, world.listSigner.certificate)
        let token = try token(world, kind, signedBy: key, chain: [certificate])
        let signer = try world.authorize(token).get()
        #expect(signer == certificate)
        try token.verifySignature(by: signer)
    }

    /// Another document signer of the same IACA is a document signer, not
    /// this document's: it is accepted through the list-signer profile it
    /// shares (the mdlDS EKU), as the rule documents.
    @Test func siblingDocumentSigner() throws {
        let world = try ListWorld()
        let sibling = try world.authority.reissuingDocumentSigner(.valid, now: world.now)
        let token = try token(world, .statusList, signedBy: sibling.documentSignerKey, chain: [sibling.documentSigner])
        #expect(try world.authorize(token).get() == sibling.documentSigner)
    }

    /// The reference names the certificate: the token must be signed by its
    /// key, with or without x5chain naming it.
    @Test(arguments: TestIssuer.ListPublisher.Kind.allCases)
    func referenceCertificate(kind: TestIssuer.ListPublisher.Kind) throws {
        let world = try ListWorld()
        let reference = world.listSigner.certificate.der
        for chain in [[], [world.listSigner.certificate]] {
            let token = try token(world, kind, signedBy: world.listSigner.key, chain: chain)
            let signer = try world.authorize(token, reference: reference).get()
            #expect(signer == world.listSigner.certificate)
            try token.verifySignature(by: signer)
        }
        // Signed by another key of the same IACA: the named certificate's key does not verify it.
        let other = try token(world, kind, signedBy: world.authority.documentSignerKey, chain: [])
        let named = try world.authorize(other, reference: reference).get()
        #expect(listError { () throws(StatusListError) in try other.verifySignature(by: named) }?.step == "signature")
        // x5chain naming another signer than the reference.
        let contradicting = try token(world, kind, signedBy: world.authority.documentSignerKey, chain: [world.authority.documentSigner])
        #expect(world.authorize(contradicting, reference: reference).failure?.step == "signer")
    }

    @Test func referenceCertificateOfAnotherIACA() throws {
        let world = try ListWorld()
        let stranger = try TestIssuer.Authority(now: world.now, name: "Elsewhere")
        let signer = try stranger.issuingListSigner(now: world.now)
        let token = try token(world, .identifierList, signedBy: signer.key, chain: [])
        let error = world.authorize(token, reference: signer.certificate.der).failure
        #expect(error?.step == "signer")
        #expect(error?.detail.contains("does not chain") == true)
        #expect(world.authorize(token, reference: [0x30, 0x03, 0x02, 0x01, 0x01]).failure?.step == "signer")
    }

    /// Another issuer's list signer, valid under its own IACA, cannot speak for this issuer's documents.
    @Test(arguments: TestIssuer.ListPublisher.Kind.allCases)
    func signerOfAnotherIACA(kind: TestIssuer.ListPublisher.Kind) throws {
        let world = try ListWorld()
        let stranger = try TestIssuer.Authority(now: world.now, name: "Elsewhere")
        let signer = try stranger.issuingListSigner(now: world.now)
        let token = try token(world, kind, signedBy: signer.key, chain: [signer.certificate, stranger.iaca])
        let error = world.authorize(token).failure
        #expect(error?.step == "signer")
        #expect(error?.detail.contains("does not chain to the IACA that issued the document signer") == true)
        // Under its own IACA the same token is authorized: the IACA made the difference.
        let own = ListSignerRule.authorize(token: token, referenceCertificate: nil, documentSigner: stranger.documentSigner,
                                           issuingAnchor: stranger.iaca, at: world.now)
        #expect(try own.get() == signer.certificate)
    }

    /// Certificates of the right IACA that are not list signers.
    @Test func certificatesWithoutTheProfile() throws {
        let world = try ListWorld()
        let noEKU = try world.authority.issuingListSigner(now: world.now, extendedKeyUsage: nil)
        let otherEKU = try world.authority.issuingListSigner(now: world.now, extendedKeyUsage: ["1.3.6.1.5.5.7.3.1"])
        let readerEKU = try world.authority.issuingListSigner(now: world.now, extendedKeyUsage: ["1.0.18013.5.1.6"])
        let noSignature = try world.authority.issuingListSigner(now: world.now, keyUsage: .keyAgreement)
        let expired = try world.authority.issuingListSigner(now: world.now, validity: (world.now - 400 * 86_400)...(world.now - 86_400))
        for (name, signer, words) in [("no EKU", noEKU, "extended key usage"), ("TLS EKU", otherEKU, "extended key usage"),
                                      ("reader EKU", readerEKU, "extended key usage"), ("no digitalSignature", noSignature, "digitalSignature"),
                                      ("expired", expired, "not valid")] {
            let token = try token(world, .statusList, signedBy: signer.key, chain: [signer.certificate])
            let error = world.authorize(token).failure
            #expect(error?.step == "signer", "\(name)")
            #expect(error?.detail.contains(words) == true, "\(name): \(error?.detail ?? "")")
        }
    }

    /// The IACA signs certificates, not lists.
    @Test func iacaItself() throws {
        let world = try ListWorld()
        let token = try token(world, .identifierList, signedBy: world.authority.iacaKey, chain: [world.authority.iaca])
        #expect(world.authorize(token).failure?.step == "signer")
        #expect(world.authorize(token, reference: world.authority.iaca.der).failure?.step == "signer")
    }

    /// A pinned document signer is its own anchor: it may sign its lists,
    /// still only within its validity.
    @Test func pinnedDocumentSigner() throws {
        let world = try ListWorld()
        let signer = world.authority.documentSigner
        let own = try token(world, .identifierList, signedBy: world.authority.documentSignerKey, chain: [signer])
        let pinned = ListSignerRule.authorize(token: own, referenceCertificate: nil, documentSigner: signer, issuingAnchor: signer, at: world.now)
        #expect(try pinned.get() == signer)
        let late = ListSignerRule.authorize(token: own, referenceCertificate: nil, documentSigner: signer, issuingAnchor: signer,
                                            at: signer.notAfter + 86_400)
        #expect(late.failure?.step == "signer")
        // Another certificate is not trusted through a pinned signer.
        let other = try token(world, .identifierList, signedBy: world.listSigner.key, chain: [world.listSigner.certificate])
        let refused = ListSignerRule.authorize(token: other, referenceCertificate: nil, documentSigner: signer, issuingAnchor: signer, at: world.now)
        #expect(refused.failure?.step == "signer")
    }

    @Test func noSignerNamed() throws {
        let world = try ListWorld()
        let token = try token(world, .statusList, signedBy: world.listSigner.key, chain: [])
        let error = world.authorize(token).failure
        #expect(error?.step == "signer")
        #expect(error?.detail.contains("no x5chain") == true)
    }

    /// x5chain in the unprotected header names the signer as well: the
    /// signature does not rest on it, and the certificate must chain anyway.
    @Test func unprotectedX5chain() throws {
        let world = try ListWorld()
        var publisher = world.publisher(.statusList, .statuses(bits: 1, [1]))
        publisher.x5chainProtected = false
        let token = try ListToken(bytes: world.token(publisher), kind: .statusList)
        #expect(try world.authorize(token).get() == world.listSigner.certificate)
    }
}
