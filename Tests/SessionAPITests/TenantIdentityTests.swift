import Crypto
import Deployment
import Foundation
import HTTPService
import JSON
import MDoc
@testable import SessionAPI
import Settings
import TestIssuer
import TestSupport
import Testing
import Verification

/// Serve looks tenants up in the deployment's directory, the worker's, and
/// asks the same `Tenant` whether it owns a merchant id or an origin: one
/// answer for both, by the id's bytes (`IdentityRule`).
@Suite struct TenantIdentityTests {
    @Test func theWorkerAndServeAgreeOnMerchantIdsOriginsAndTenants() throws {
        let json = #"{"tenants": [{"id": "Caf\u00e9", "teamId": "T", "merchantIds": ["Caf\u00e9", "K"], "origins": ["https://xn--caf-dma.example"], "#
            + #""testConditions": {"kinds": ["developerProfile"]}}]}"#
        let settings = try VeridocSettings(JSONParser().parse(json), baseURL: URL(fileURLWithPath: "/"))
        let deployment = try Deployment(settings)
        let worker = try #require(try Configuration.load(settings).directory["Caf\u{00E9}"])
        let api = try APITenants.load(deployment)
        let serve = try #require(api.directory["Caf\u{00E9}"])
        for probe in ["Caf\u{00E9}", "Cafe\u{0301}", "caf\u{00E9}", "Caf\u{00E9} ", "K", "\u{212A}", "https://xn--caf-dma.example", "https://caf\u{00E9}.example",
                      "https://XN--CAF-DMA.example", "https://xn--caf-dma.example/"] {
            #expect(worker.owns(merchantID: probe) == serve.owns(merchantID: probe), "merchantId \(probe.unicodeScalars.map(\.value))")
            #expect(worker.owns(origin: probe) == serve.owns(origin: probe), "origin \(probe.unicodeScalars.map(\.value))")
            let workerKnows = (try Configuration.load(settings)).directory[probe] != nil
            #expect(workerKnows == (api.directory[probe] != nil), "tenant \(probe.unicodeScalars.map(\.value))")
        }
        #expect(serve.owns(merchantID: "Caf\u{00E9}") && !serve.owns(merchantID: "Cafe\u{0301}") && !serve.owns(merchantID: "\u{212A}"))
        #expect(serve.owns(origin: "https://xn--caf-dma.example") && !serve.owns(origin: "https://caf\u{00E9}.example") && !serve.owns(origin: "https://XN--CAF-DMA.example"))
    }
}

/// Serve refuses a tenant whose web requests no wallet would answer: one with
/// origins and no `webReader`. A test tenant may go without (its requests are
/// for Apple's test profiles).
@Suite struct WebReaderRequiredTests {
    static func load(_ tenant: String, files: (URL) throws -> Void = { _ in }) throws -> APITenants {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("web-reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestIssuer.PEM.certificates([try TestIssuer.Authority(now: Date()).iaca])
            .write(to: folder.appendingPathComponent("iaca.pem"), atomically: true, encoding: .utf8)
        try files(folder)
        let settings = try VeridocSettings(JSONParser().parse(#"{"tenants": [\#(tenant)]}"#), baseURL: folder)
        return try APITenants.load(try Deployment(settings))
    }

    @Test func aTenantWithOriginsAndNoWebReaderIsRefusedNamingTheSetting() throws {
        do {
            _ = try Self.load(#"{"id": "acme", "origins": ["https://shop.example"], "testConditions": {"kinds": ["developerProfile"], "trustAnchors": ["iaca.pem"]}}"#)
        } catch {
            Issue.record("a test tenant may go without a web reader: \(error)")
        }
        _ = try Self.load(#"{"id": "acme", "trustAnchors": ["iaca.pem"]}"#)
        do {
            _ = try Self.load(#"{"id": "acme", "origins": ["https://shop.example"], "trustAnchors": ["iaca.pem"]}"#)
            Issue.record("a production tenant with origins and no webReader loaded")
        } catch let error as ConfigError {
            #expect(error.message.hasPrefix("tenants[0].webReader: required for a tenant with origins"), "\(error.message)")
        }
    }

    /// A tenant whose web reader identities are certificates valid over `validity`, each with its own key.
    static func webReaderTenant(_ validity: [(notBefore: Date, notAfter: Date)]) throws -> (APITenants, [Certificate]) {
        var certificates: [Certificate] = []
        let readers = validity.indices.map { #"{"certificates": "reader-\#($0).pem", "privateKey": "reader-key-\#($0).pem"}"# }
        let tenants = try Self.load(#"{"id": "acme", "origins": ["https://shop.example"], "trustAnchors": ["iaca.pem"], "merchantIds": ["m"], "teamId": "T", "#
                                    + #""encryptionKeys": ["merchant.pem"], "apiKeys": ["\#(APIKeyring.setting(forKey: "vdk_expiry-key"))"], "#
                                    + #""webReader": [\#(readers.joined(separator: ", "))]}"#) { folder in
            var keys = [("merchant.pem", try PrivateKey.generate(curve: .p256).pkcs8PEM())]
            for (index, dates) in validity.enumerated() {
                let key = try PrivateKey.generate(curve: .p256)
                let certificate = try CertificateBuilder(subject: [("CN", "shop.example")], publicKey: key.publicKey, notBefore: dates.notBefore,
                                                         notAfter: dates.notAfter, serial: UInt64(index + 3)).selfSigned(with: key)
                certificates.append(certificate)
                try TestIssuer.PEM.certificates([certificate]).write(to: folder.appendingPathComponent("reader-\(index).pem"), atomically: true, encoding: .utf8)
                keys.append(("reader-key-\(index).pem", try key.pkcs8PEM()))
            }
            for (name, pem) in keys {
                guard FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data(pem.utf8),
                                                     attributes: [.posixPermissions: 0o600]) else { throw TestFailure("cannot write \(name)") }
            }
        }
        return (tenants, certificates)
    }

    static func create(_ body: String, tenants: APITenants, at now: Date) -> HTTPResponse {
        let api = SessionAPI(tenants: tenants, rateLimit: (100, 100), clock: { now })
        return api.handle(HTTPRequest(method: "POST", path: "/v1/sessions",
                                      headers: ["Authorization": "Bearer vdk_expiry-key", "Content-Type": "application/json"], body: Array(body.utf8)))
    }

    static let webSession = #"{"flow":"apple-wallet-web","origin":"https://shop.example","ageAtLeast":[{"age":21,"retention":{"intent":"willNotStore"}}]}"#

    /// Past the web reader certificate's expiry, a web session is refused with
    /// 409 certificate_expired naming the setting; an app session is not affected.
    @Test func anExpiredWebReaderCertificateRefusesWebSessions() throws {
        let notAfter = Date() + 3_600
        let (tenants, _) = try Self.webReaderTenant([(Date() - 86_400, notAfter)])
        func create(_ body: String, at now: Date) -> HTTPResponse { Self.create(body, tenants: tenants, at: now) }
        let expired = create(Self.webSession, at: notAfter + 1)
        let answer = try #require(try JSONParser().parse(expired.body).objectValue)
        #expect(expired.status == 409 && answer["error"]?.stringValue == "certificate_expired", "\(answer)")
        #expect(answer["detail"]?.stringValue?.contains("webReader") == true, "\(answer)")
        // A session that would outlive the certificate is refused too; one that ends
        // before it gets past the check (to the missing database: 503).
        let short = #"{"flow":"apple-wallet-web","origin":"https://shop.example","ttlSeconds":60,"ageAtLeast":[{"age":21,"retention":{"intent":"willNotStore"}}]}"#
        #expect(create(Self.webSession, at: notAfter - 60).status == 409, "the default session lasts longer than the minute left")
        #expect(create(short, at: notAfter - 61).status == 503)
        #expect(create(short, at: notAfter - 59).status == 409)
        #expect(create(#"{"flow":"apple-wallet-app","merchantId":"m"}"#, at: notAfter + 1).status == 503)
    }

    /// A renewal configured beside the certificate it replaces takes over as
    /// soon as it is valid, so sessions never meet the old one's expiry.
    @Test func aRenewedWebReaderCertificateTakesOverWithoutAGap() throws {
        let oldEnd = Date() + 3_600
        let renewedStart = oldEnd - 7_200
        let (tenants, certificates) = try Self.webReaderTenant([(Date() - 86_400, oldEnd), (renewedStart, oldEnd + 30 * 86_400)])
        let config = try #require(tenants.directory["acme"])
        func signer(at now: Date) throws -> [[UInt8]]? {
            try SessionSigners.choose(for: .appleWalletWeb, config: config, from: now, through: now + 600).webReader?.certificates
        }
        #expect(try signer(at: renewedStart - 60) == [certificates[0].der], "before the renewal is valid, the old certificate signs")
        #expect(try signer(at: renewedStart + 60) == [certificates[1].der], "once it is valid, the renewal signs")
        #expect(try signer(at: oldEnd + 60) == [certificates[1].der])
        // Past the old certificate's expiry, web sessions still get past the check (to the missing database: 503).
        #expect(Self.create(Self.webSession, tenants: tenants, at: oldEnd + 60).status == 503)
        #expect(Self.create(Self.webSession, tenants: tenants, at: oldEnd + 31 * 86_400).status == 409)
        // An app session has no web reader to choose.
        #expect(try SessionSigners.choose(for: .appleWalletApp, config: config, from: oldEnd + 60, through: oldEnd + 660).webReader == nil)
    }
}
