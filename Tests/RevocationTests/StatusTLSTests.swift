import Crypto
import Foundation
import HTTPService
import MDoc
import Revocation
import StatusFetch
import TestIssuer
import Testing
import TestSupport
import Verification

/// Lists over HTTPS as a deployment fetches them: certificate verification
/// against a test CA (`statusLists.caFile`), the strict policy (plain http
/// refused, redirects only to https), on loopback through the fetcher's
/// test hook, since the strict policy refuses loopback addresses.
@Suite struct StatusTLSTests {
    /// A CA and a server certificate for 127.0.0.1, the CA written to a PEM file.
    struct TestCA {
        let caFile: URL
        let serverTLS: HTTPDaemon.TLS

        init() throws {
            let caKey = try PrivateKey.generate(curve: .p256)
            var ca = CertificateBuilder(subject: [("CN", "Revocation Test CA")], publicKey: caKey.publicKey,
                                        notBefore: Date() - 3_600, notAfter: Date() + 86_400)
            ca.isCA = true
            ca.keyUsage = [.keyCertSign, .cRLSign]
            let caCertificate = try ca.selfSigned(with: caKey)
            let serverKey = try PrivateKey.generate(curve: .p256)
            var server = CertificateBuilder(subject: [("CN", "127.0.0.1")], publicKey: serverKey.publicKey, notBefore: Date() - 3_600, notAfter: Date() + 86_400)
            server.isCA = false
            server.keyUsage = [.digitalSignature]
            server.extendedKeyUsage = ["1.3.6.1.5.5.7.3.1"]
            // subjectAltName: iPAddress 127.0.0.1.
            server.extraExtensions = [(oid: "2.5.29.17", critical: false, der: [0x30, 0x06, 0x87, 0x04, 127, 0, 0, 1])]
            let serverCertificate = try server.signed(by: caCertificate, issuerKey: caKey)
            caFile = FileManager.default.temporaryDirectory.appendingPathComponent("revocation-ca-\(UUID().uuidString).pem")
            try Data(TestIssuer.PEM.certificates([caCertificate]).utf8).write(to: caFile)
            serverTLS = HTTPDaemon.TLS(certificatePEM: TestIssuer.PEM.certificates([serverCertificate]), keyPEM: try serverKey.pkcs8PEM())
        }
    }

    static func strictService(caFile: URL?) -> StatusService {
        var policy = FetchPolicy(connectTimeout: 30, totalTimeout: 60, caFile: caFile?.path)
        policy.allowsLoopbackForTests = true
        return StatusService(configuration: StatusService.Configuration(fetch: policy))
    }

    @Test func aListOverVerifiedHTTPSIsRead() throws {
        let ca = try TestCA()
        defer { try? FileManager.default.removeItem(at: ca.caFile) }
        let server = try ListServer(tls: ca.serverTLS)
        defer { server.stop() }
        var scenario = try RevocationScenario(seed: 30, server: server)
        let uri = server.url("/tls", scheme: "https")
        let issued = Int64(RevocationScenario.now.timeIntervalSince1970)
        let publisher = TestIssuer.ListPublisher(kind: .statusList, content: .statuses(bits: 1, [0, 1]), subject: uri, issuedAt: issued - 60, expiresAt: issued + 3_600)
        server.publish("/tls", try publisher.signed(by: scenario.signer.key, chain: [scenario.signer.certificate]), mediaType: "application/statuslist+cwt")

        let trusting = Self.strictService(caFile: ca.caFile)
        defer { trusting.stop() }
        let revoked = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(1, uri)), with: try scenario.verifier(), service: trusting)
        #expect(revoked.codes == [.statusRevoked], "\(revoked.undeterminedDetail ?? "")")

        // The system's store does not know the test CA: the handshake fails, and that is undetermined, never valid.
        let untrusting = Self.strictService(caFile: nil)
        defer { untrusting.stop() }
        let unknown = RevocationScenario.verify(try scenario.event(RevocationScenario.statusListReference(0, uri)), with: try scenario.verifier(), service: untrusting)
        #expect(unknown.codes == [.statusUndetermined] && unknown.documentStatus?.cause == "fetch")
    }

    /// A list token is fetched over https only; a CRL may be named over
    /// plain http, but one named over https is never redirected down to it.
    @Test(arguments: [false, true])
    func aRedirectFromHTTPSToPlainHTTPIsNotFollowed(crl: Bool) throws {
        let ca = try TestCA()
        defer { try? FileManager.default.removeItem(at: ca.caFile) }
        let server = try ListServer(tls: ca.serverTLS)
        defer { server.stop() }
        let plain = try ListServer()
        defer { plain.stop() }
        var scenario = try RevocationScenario(seed: crl ? 32 : 31, server: plain)
        let reference: MSOStatus?
        if crl {
            scenario.factory.authority = try scenario.factory.authority.namingRevocationLists(documentSigner: [server.url("/redirect", scheme: "https")])
            plain.publish("/moved", try scenario.factory.authority.revocationList(thisUpdate: RevocationScenario.now - 60, nextUpdate: RevocationScenario.now + 3_600),
                          mediaType: "application/pkix-crl")
            reference = nil
        } else {
            try scenario.publish(.statuses(bits: 1, [0]), at: "/moved")
            reference = RevocationScenario.statusListReference(0, server.url("/redirect", scheme: "https"))
        }
        server.put("/redirect", ListServer.Answer(status: 302, location: plain.url("/moved")))
        let service = Self.strictService(caFile: ca.caFile)
        defer { service.stop() }
        let result = RevocationScenario.verify(try scenario.event(reference), with: try scenario.verifier(), service: service)
        #expect(result.codes == [.statusUndetermined] && result.documentStatus?.cause == "fetch")
        #expect(server.requests("/redirect") == 1 && plain.requests("/moved") == 0)
    }
}
