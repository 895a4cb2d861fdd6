import Crypto
import Deployment
import Foundation
import HTTPService
import JSON
@testable import SessionAPI
import Settings
import TestIssuer
import Testing
import TestSupport
import Verification

/// What a tenant needs for OpenID4VP sessions: a verifier identity (signed
/// requests) or the explicit choice of unsigned ones; a test tenant may go
/// without. A verifier certificate that ends before the session would is
/// refused like the web reader's.
@Suite struct OpenID4VPConfigTests {
    static let apiKey = "vdk_openid4vp-config-key"

    /// acme with origins and a web reader, plus `extra` members; `verifier` writes an openid4vp verifier of that expiry, with a dNSName or not.
    static func tenants(_ extra: String, verifier notAfter: Date? = nil, dnsName: Bool = true) throws -> APITenants {
        let key = try PrivateKey.generate(curve: .p256)
        return try WebReaderRequiredTests.load(
            #"{"id": "acme", "origins": ["https://shop.example.com"], "trustAnchors": ["iaca.pem"], "encryptionKeys": ["merchant.pem"], "#
                + #""apiKeys": ["\#(APIKeyring.setting(forKey: apiKey))"], "webReader": {"certificates": "reader.pem", "privateKey": "reader-key.pem"}\#(extra)}"#
        ) { folder in
            var builder = CertificateBuilder(subject: [("CN", "shop.example.com")], publicKey: key.publicKey, notBefore: Date() - 86_400,
                                             notAfter: notAfter ?? Date() + 86_400, serial: 4)
            let reader = try builder.selfSigned(with: key)
            try TestIssuer.PEM.certificates([reader]).write(to: folder.appendingPathComponent("reader.pem"), atomically: true, encoding: .utf8)
            if dnsName {
                try TestIssuer.PEM.certificates([try TestIssuer.Merchant.openID4VPVerifierCertificate(key: key, origin: "https://shop.example.com", notAfter: notAfter ?? Date() + 86_400)])
                    .write(to: folder.appendingPathComponent("verifier-san.pem"), atomically: true, encoding: .utf8)
            }
            builder.serial = 5
            try TestIssuer.PEM.certificates([try builder.selfSigned(with: key)])
                .write(to: folder.appendingPathComponent("verifier.pem"), atomically: true, encoding: .utf8)
            for (name, pem) in [("reader-key.pem", try key.pkcs8PEM()), ("merchant.pem", try PrivateKey.generate(curve: .p256).pkcs8PEM())] {
                guard FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data(pem.utf8),
                                                     attributes: [.posixPermissions: 0o600]) else { throw TestFailure("cannot write \(name)") }
            }
        }
    }

    static func create(_ tenants: APITenants, at now: Date = Date(), ttl: Int? = nil) -> HTTPResponse {
        let api = SessionAPI(tenants: tenants, rateLimit: (100, 100), clock: { now })
        let ttlMember = ttl.map { #","ttlSeconds":\#($0)"# } ?? ""
        let body = #"{"flow":"openid4vp-dc-api","origin":"https://shop.example.com"\#(ttlMember),"requestedElements":[{"namespace":"org.iso.18013.5.1","element":"family_name","retention":{"intent":"willNotStore"}}]}"#
        return api.handle(HTTPRequest(method: "POST", path: "/v1/sessions",
                                      headers: ["Authorization": "Bearer \(apiKey)", "Content-Type": "application/json"], body: Array(body.utf8)))
    }

    @Test func aProductionTenantChoosesSignedOrUnsignedRequests() throws {
        let neither = Self.create(try Self.tenants(""))
        #expect(neither.status == 409 && String(decoding: neither.body, as: UTF8.self).contains("openID4VPVerifier"), "\(String(decoding: neither.body, as: UTF8.self))")
        // Past the configuration check, the missing database answers.
        #expect(Self.create(try Self.tenants(#", "openID4VPUnsignedRequests": true"#)).status == 503)
        let signed = try Self.tenants(#", "openID4VPVerifier": {"certificates": "verifier-san.pem", "privateKey": "reader-key.pem"}"#)
        #expect(Self.create(signed).status == 503)
        #expect(signed.directory["acme"]?.openID4VPVerifier?.signers.first?.clientID == "x509_san_dns:shop.example.com")
    }

    @Test func clientIDPrefixes() throws {
        let hashed = try Self.tenants(#", "openID4VPVerifier": {"certificates": "verifier.pem", "privateKey": "reader-key.pem", "clientIdPrefix": "x509_hash"}"#)
        let identity = try #require(hashed.directory["acme"]?.openID4VPVerifier?.signers.first)
        #expect(identity.clientID == "x509_hash:" + Base64.encodeURL(sha256(try #require(identity.certificates.first))))
        do {
            _ = try Self.tenants(#", "openID4VPVerifier": {"certificates": "verifier.pem", "privateKey": "reader-key.pem"}"#)
            Issue.record("x509_san_dns with a leaf that has no dNSName loaded")
        } catch let error as ConfigError {
            #expect(error.message == "tenants[0].openID4VPVerifier.certificates: x509_san_dns needs a leaf with a subjectAltName dNSName", "\(error.message)")
        }
        do {
            _ = try Self.tenants(#", "openID4VPVerifier": {"certificates": "verifier.pem", "privateKey": "reader-key.pem", "clientIdPrefix": "redirect_uri"}"#)
            Issue.record("an unknown clientIdPrefix loaded")
        } catch let error as ConfigError {
            #expect(error.message.hasPrefix("tenants[0].openID4VPVerifier.clientIdPrefix: one of x509_san_dns, x509_hash"), "\(error.message)")
        }
    }

    @Test func aVerifierCertificateEndingBeforeTheSessionRefusesIt() throws {
        let notAfter = Date() + 3_600
        let tenants = try Self.tenants(#", "openID4VPVerifier": {"certificates": "verifier-san.pem", "privateKey": "reader-key.pem"}"#, verifier: notAfter)
        let late = Self.create(tenants, at: notAfter - 60)
        #expect(late.status == 409 && String(decoding: late.body, as: UTF8.self).contains("openID4VPVerifier"), "\(String(decoding: late.body, as: UTF8.self))")
        #expect(Self.create(tenants, at: notAfter - 61, ttl: 60).status == 503)
    }
}

/// The verifier chain as x5c carries it: leaf first, each followed by its
/// issuer, the self-signed anchor left out (HAIP), and the chain's expiry
/// its soonest certificate's.
@Suite struct OpenID4VPVerifierChainTests {
    @Test func theChainIsOrderedAndTheAnchorLeftOut() throws {
        let rootKey = try PrivateKey.generate(curve: .p256), leafKey = try PrivateKey.generate(curve: .p256)
        let rootEnd = Date() + 10 * 86_400, leafEnd = Date() + 20 * 86_400
        var rootBuilder = CertificateBuilder(subject: [("CN", "Verifier Root")], publicKey: rootKey.publicKey, notBefore: Date() - 86_400, notAfter: rootEnd, serial: 1)
        rootBuilder.isCA = true
        rootBuilder.keyUsage = [.keyCertSign]
        let root = try rootBuilder.selfSigned(with: rootKey)
        let leaf = try CertificateBuilder(subject: [("CN", "verifier.example")], publicKey: leafKey.publicKey, notBefore: Date() - 86_400,
                                          notAfter: leafEnd, serial: 2).signed(by: root, issuerKey: rootKey)
        let identity = try OpenID4VPVerifierIdentity(key: leafKey, certificates: [leaf, root], prefix: .x509Hash, setting: "v")
        #expect(identity.certificates == [leaf.der], "the anchor is not in x5c")
        #expect(identity.notAfter.map { abs($0.timeIntervalSince(rootEnd)) < 2 } == true, "expires with the root, which ends first")
        let reversed = Result { () throws(ConfigError) in try OpenID4VPVerifierIdentity(key: leafKey, certificates: [root, leaf], prefix: .x509Hash, setting: "v") }
        guard case .failure(let error) = reversed else {
            Issue.record("a chain root first loaded")
            return
        }
        #expect(error.message == "v.certificates: certificate 2 did not issue certificate 1 (leaf first, each followed by its issuer)", "\(error.message)")
    }
}

/// Which of a tenant's origins no `x509_san_dns` verifier certificate
/// names: serve warns of them at start.
@Suite struct VerifierNameTests {
    static func tenant(origins: Set<String>, names: [String], prefix: TenantSettings.OpenID4VPVerifier.ClientIDPrefix = .x509SanDNS) throws -> Tenant {
        let identities = try names.map { name in
            let key = try PrivateKey.generate(curve: .p256)
            let certificate = try TestIssuer.Merchant.openID4VPVerifierCertificate(key: key, origin: "https://unused.example", dnsName: name)
            return try OpenID4VPVerifierIdentity(key: key, certificates: [certificate], prefix: prefix, setting: "test")
        }
        return Tenant(id: "acme", trustAnchors: [], origins: origins, openID4VPVerifier: SignerRotation(identities))
    }

    @Test func originsTheCertificatesDoNotNameAreListed() throws {
        let origins: Set = ["https://shop.example.com", "https://shop.example.com:8443", "https://www.example.com", "https://a.b.example.com",
                            "https://example.com", "https://other.example", "http://localhost:8080"]
        #expect(try Self.tenant(origins: origins, names: ["shop.example.com"]).originsOutsideVerifierNames
            == ["http://localhost:8080", "https://a.b.example.com", "https://example.com", "https://other.example", "https://www.example.com"])
        // A wildcard names one label, not the bare domain or two labels; a second identity adds its names.
        #expect(try Self.tenant(origins: origins, names: ["*.example.com", "other.example"]).originsOutsideVerifierNames
            == ["http://localhost:8080", "https://a.b.example.com", "https://example.com"])
        // x509_hash names no host, and without a verifier there is nothing to compare.
        #expect(try Self.tenant(origins: origins, names: ["shop.example.com"], prefix: .x509Hash).originsOutsideVerifierNames.isEmpty)
        #expect(Tenant(id: "acme", trustAnchors: [], origins: origins).originsOutsideVerifierNames.isEmpty)
        #expect(WebOrigin.host(of: "https://[::1]:8443") == "[::1]")
        #expect(WebOrigin.host(of: "https://shop.example.com:8443") == "shop.example.com")
        #expect(WebOrigin.host(of: "https://Shop.example.com") == nil, "not an origin as browsers report it")
    }
}
