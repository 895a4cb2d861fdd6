import Crypto
import Foundation
import Testing
import TestSupport

@Suite("X.509 against the shared vectors", .enabled(if: X509Vectors.available, X509Vectors.skipReason))
struct X509VectorTests {
    let appleDS = "apple-verify-with-wallet-sample/issuer_signing.pem"
    let appleRoot = "apple-verify-with-wallet-sample/issuer_root.pem"
    let annexD = "iso18013-5-annex-d/ds_cert.pem"
    let auth0 = "auth0-mdl/issuer_ny_dmv.pem"

    @Test func appleSampleCertificatesParse() throws {
        let ds = try X509Vectors.certificate(appleDS)
        let root = try X509Vectors.certificate(appleRoot)

        #expect(ds.subject.commonName == "PassKit Identity Test Document Signing")
        #expect(ds.issuer == root.subject)
        #expect(ds.subject.countryName == nil)
        #expect(ds.extendedKeyUsage == ["1.0.18013.5.1.2"])
        #expect(ds.keyUsage == .digitalSignature)
        #expect(ds.basicConstraints == BasicConstraints(isCA: false))
        #expect(ds.isSelfIssued == false)
        #expect(ds.authorityKeyIdentifier == root.subjectKeyIdentifier)
        #expect(ds.serialNumberHex == "A58850D4A494D0ED")
        #expect(hexString(ds.sha256Fingerprint) == "1b6cd5f875207aa5912ca57f84e6dd32268dbff091927367ab1f80d25f75abff")
        #expect(ds.unhandledCriticalExtensions.isEmpty)
        #expect(try ds.publicKey().type == .ec(.p256))
        #expect(ds.notBefore == utc("2022-03-31T20:36:14Z"))
        #expect(ds.notAfter == utc("2121-03-07T20:36:14Z"))

        #expect(root.subject.commonName == "PassKit Identity Test Issuer Root CA")
        #expect(root.subject.description == "CN=PassKit Identity Test Issuer Root CA")
        #expect(root.basicConstraints == BasicConstraints(isCA: true))
        #expect(root.keyUsage == [.keyCertSign, .cRLSign])
        #expect(root.extendedKeyUsage == nil)
        #expect(root.isSelfIssued)
    }

    @Test(arguments: ["2022-04-01", "2026-11-29"])
    func appleDocumentSignerValidatesToRoot(day: String) throws {
        let ds = try X509Vectors.certificate(appleDS)
        let root = try X509Vectors.certificate(appleRoot)
        let result = TrustStore(anchors: [root]).validate(leaf: ds, intermediates: [], at: utc(day))
        #expect(try result.get() == [ds, root])
    }

    @Test func appleDocumentSignerAgainstUnrelatedAnchorIsUntrusted() throws {
        let ds = try X509Vectors.certificate(appleDS)
        let store = TrustStore(anchors: [try X509Vectors.certificate(auth0), try X509Vectors.certificate(annexD)])
        let result = store.validate(leaf: ds, intermediates: [], at: utc("2024-01-01"))
        guard case .failure(.untrusted(let detail)) = result else {
            Issue.record("expected .untrusted, got \(result)")
            return
        }
        #expect(detail.contains("PassKit Identity Test Document Signing"))
    }

    @Test func appleDocumentSignerProfile() throws {
        #expect(DocumentSignerProfile.violations(of: try X509Vectors.certificate(appleDS)).isEmpty)
        let rootViolations = DocumentSignerProfile.violations(of: try X509Vectors.certificate(appleRoot))
        #expect(rootViolations.count == 4)  // no EKU, no digitalSignature, keyCertSign, CA
    }

    @Test func annexDDocumentSignerMatchesItsDERAndProfile() throws {
        let ds = try X509Vectors.certificate(annexD)
        #expect(ds.der == (try X509Vectors.hex("iso18013-5-annex-d/ds_cert.der.hex")))
        #expect(ds.subject.description == "CN=utopia ds, C=US")
        #expect(ds.issuer.description == "CN=utopia iaca, C=US")
        #expect(hexString(ds.authorityKeyIdentifier ?? []) == "54fa2383a04c28e0d930792261c80c4881d2c00b")
        #expect(hexString(ds.subjectKeyIdentifier ?? []) == "14e29017a6c35621ffc7a686b7b72db06cd12351")
        #expect(ds.basicConstraints == nil)
        #expect(ds.serialNumberHex == "3C4416EED784F3B413E48F56F075ABFA6D87EB84")
        #expect(DocumentSignerProfile.violations(of: ds).isEmpty)
    }

    @Test func annexDPinnedDocumentSignerIsValidInsideItsWindow() throws {
        let ds = try X509Vectors.certificate(annexD)
        #expect(try TrustStore(anchors: [ds]).validate(leaf: ds, intermediates: [], at: utc("2021-06-01")).get() == [ds])
    }

    @Test(arguments: [("2021-10-02", "expired"), ("2026-11-29", "expired"), ("2019-01-01", "not yet valid")])
    func annexDPinnedDocumentSignerOutsideItsWindow(day: String, reason: String) throws {
        let ds = try X509Vectors.certificate(annexD)
        let result = TrustStore(anchors: [ds]).validate(leaf: ds, intermediates: [], at: utc(day))
        guard case .failure(.certificateInvalid(let detail)) = result else {
            Issue.record("expected .certificateInvalid, got \(result)")
            return
        }
        #expect(detail.contains(reason))
        #expect(detail.contains("depth 0"))
        #expect(detail.contains("utopia ds"))
    }

    @Test func auth0SelfSignedPinnedIssuer() throws {
        let issuer = try X509Vectors.certificate(auth0)
        #expect(issuer.subject.organizationName == "NY DMV")
        #expect(issuer.subject.stateOrProvinceName == "New York")
        #expect(issuer.subject.countryName == "US")
        #expect(issuer.subject.description == "C=US, ST=New York, L=Albany, O=NY DMV, OU=NY DMV")
        #expect(issuer.isSelfIssued)
        #expect(issuer.keyUsage == nil)
        #expect(try TrustStore(anchors: [issuer]).validate(leaf: issuer, intermediates: [], at: utc("2024-01-01")).get() == [issuer])
    }

    @Test func animoRootParses() throws {
        let root = try X509Vectors.certificate("animo-mdoc/animo-oid4vp-1.0/trust_anchor.pem")
        #expect(root.subject.description == "CN=Animo, C=NL")
        #expect(root.basicConstraints == BasicConstraints(isCA: true, pathLength: 0))
        #expect(root.keyUsage == [.keyCertSign, .cRLSign])
        #expect(root.isSelfIssued)
    }

    @Test func vicalIssuingCAValidatesToRoot() throws {
        let root = try X509Vectors.certificate("vical/aamva_dts_root_ca.pem")
        let issuing = try X509Vectors.certificate("vical/aamva_dts_issuing_ca.pem")
        #expect(issuing.subject.commonName == "AAMVA DTS Issuing CA")
        #expect(issuing.subject.organizationName == "American Association of Motor Vehicle Administrators")
        #expect(issuing.basicConstraints == BasicConstraints(isCA: true, pathLength: 0))
        #expect(try TrustStore(anchors: [root]).validate(leaf: issuing, intermediates: [], at: utc("2025-11-20")).get() == [issuing, root])
        // The issuing CA is itself an acceptable anchor.
        #expect(try TrustStore(anchors: [issuing]).validate(leaf: issuing, intermediates: [], at: utc("2025-11-20")).get() == [issuing])
    }

    @Test(arguments: ["ds_p256.pem", "ds_p384.pem"])
    func syntheticDocumentSignersValidateOnlyToTheirIACA(file: String) throws {
        let ds = try X509Vectors.certificate("synthetic-pymdoccbor/" + file)
        let iaca = try X509Vectors.certificate("synthetic-pymdoccbor/iaca.pem")
        let unrelated = try X509Vectors.certificate("synthetic-pymdoccbor/iaca_unrelated.pem")
        let at = utc("2026-11-29T13:07:18Z")
        #expect(DocumentSignerProfile.violations(of: ds).isEmpty)
        #expect(try TrustStore(anchors: [iaca]).validate(leaf: ds, intermediates: [], at: at).get() == [ds, iaca])
        let result = TrustStore(anchors: [unrelated]).validate(leaf: ds, intermediates: [], at: at)
        guard case .failure(.untrusted) = result else {
            Issue.record("expected .untrusted, got \(result)")
            return
        }
    }

    @Test func parsePEMReturnsEveryBlockInOrder() throws {
        let bundle = try X509Vectors.text(appleDS) + "\n" + X509Vectors.text(appleRoot)
        let parsed = try Certificate.parsePEM(bundle)
        #expect(parsed.map(\.subject.commonName) == ["PassKit Identity Test Document Signing", "PassKit Identity Test Issuer Root CA"])
    }

    @Test func parsePEMSkipsOtherBlockTypes() throws {
        let bundle = try X509Vectors.text("apple-verify-with-wallet-sample/merchant_encryption_key.pem")
            + X509Vectors.text("apple-verify-with-wallet-sample/merchant_encryption_cert.pem")
        #expect(try Certificate.parsePEM(bundle).count == 1)
        #expect(throws: CryptoError.self) {
            try Certificate.parsePEM(X509Vectors.text("apple-verify-with-wallet-sample/merchant_encryption_key.pem"))
        }
    }
}
