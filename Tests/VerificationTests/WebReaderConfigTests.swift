import Crypto
import Foundation
import MDoc
import Testing
import TestIssuer
import Verification

/// `webReader`: the certificate serve signs web DeviceRequests with, and its
/// key. Loaded strictly: a P-256 key, the one the first certificate certifies,
/// in a file only its owner can read.
@Suite struct WebReaderConfigTests {
    static func certificate(for key: PrivateKey) throws -> Certificate {
        try CertificateBuilder(subject: [("O", "Acme"), ("CN", "shop.example.com")], publicKey: key.publicKey,
                               notBefore: VICALScopeTests.now - 86_400, notAfter: VICALScopeTests.now + 86_400 * 30, serial: 7)
            .selfSigned(with: key)
    }

    static func tenant(_ folder: VICALScopeTests.Folder, certificate: Certificate, key: PrivateKey, keyMode: Int = 0o600) throws -> [String: Any] {
        try folder.write("pki/iaca.pem", Array(TestIssuer.PEM.certificates([try TestIssuer.Authority(now: VICALScopeTests.now).iaca]).utf8))
        try folder.write("pki/web-reader.pem", Array(TestIssuer.PEM.certificates([certificate]).utf8))
        try folder.write("pki/web-reader-key.pem", Array(try key.pkcs8PEM().utf8))
        try FileManager.default.setAttributes([.posixPermissions: keyMode], ofItemAtPath: folder.url.appendingPathComponent("pki/web-reader-key.pem").path)
        return ["id": "acme", "trustAnchors": ["pki/iaca.pem"], "origins": ["https://shop.example.com"],
                "webReader": ["certificates": "pki/web-reader.pem", "privateKey": "pki/web-reader-key.pem"]]
    }

    @Test func theKeyAndTheCertificateThatCertifiesItLoad() throws {
        let folder = try VICALScopeTests.Folder()
        let key = try PrivateKey.generate(curve: .p256)
        let certificate = try Self.certificate(for: key)
        let tenant = try #require(try folder.load(try Self.tenant(folder, certificate: certificate, key: key)).directory["acme"])
        let signer = try #require(tenant.webReader?.signers.first)
        #expect(signer.certificates == [certificate.der])
        #expect(signer.key.publicKey.uncompressedPoint == key.publicKey.uncompressedPoint)
    }

    @Test func aKeyTheCertificateDoesNotCertifyIsRefused() throws {
        let folder = try VICALScopeTests.Folder()
        let other = try Self.certificate(for: try PrivateKey.generate(curve: .p256))
        let message = try folder.loadError(try Self.tenant(folder, certificate: other, key: try PrivateKey.generate(curve: .p256)))
        #expect(message == "tenants[0].webReader.certificates: the first certificate must certify webReader.privateKey", "\(message)")
    }

    @Test func aKeyOtherThanP256IsRefused() throws {
        let folder = try VICALScopeTests.Folder()
        let key = try PrivateKey.generate(curve: .p384)
        let message = try folder.loadError(try Self.tenant(folder, certificate: try Self.certificate(for: key), key: key))
        #expect(message.hasPrefix("tenants[0].webReader.privateKey: it signs with ES256"), "\(message)")
    }

    /// A renewal: the old identity and the new one side by side, in an array.
    @Test func severalIdentitiesLoadAsOneRotation() throws {
        let folder = try VICALScopeTests.Folder()
        let key = try PrivateKey.generate(curve: .p256)
        let renewedKey = try PrivateKey.generate(curve: .p256)
        let renewed = try CertificateBuilder(subject: [("O", "Acme"), ("CN", "shop.example.com")], publicKey: renewedKey.publicKey,
                                             notBefore: VICALScopeTests.now + 86_400 * 20, notAfter: VICALScopeTests.now + 86_400 * 60, serial: 8)
            .selfSigned(with: renewedKey)
        let current = try Self.certificate(for: key)
        var tenant = try Self.tenant(folder, certificate: current, key: key)
        try folder.write("pki/renewed.pem", Array(TestIssuer.PEM.certificates([renewed]).utf8))
        try folder.write("pki/renewed-key.pem", Array(try renewedKey.pkcs8PEM().utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.url.appendingPathComponent("pki/renewed-key.pem").path)
        tenant["webReader"] = [tenant["webReader"] as Any, ["certificates": "pki/renewed.pem", "privateKey": "pki/renewed-key.pem"]]
        let rotation = try #require(try folder.load(tenant).directory["acme"]?.webReader)
        #expect(rotation.signers.map(\.certificates) == [[current.der], [renewed.der]])
        #expect(rotation.notAfter == renewed.notAfter)
        // Each entry is checked on its own, and named by its place.
        tenant["webReader"] = [tenant["webReader"].flatMap { ($0 as? [Any])?.first } as Any,
                               ["certificates": "pki/renewed.pem", "privateKey": "pki/web-reader-key.pem"]]
        #expect(try folder.loadError(tenant) == "tenants[0].webReader[1].certificates: the first certificate must certify webReader[1].privateKey")
        tenant["webReader"] = [Any]()
        #expect(try folder.loadError(tenant).hasPrefix("tenants[0].webReader: one object, or an array of 1 to 4 of them"))
    }

    @Test func aKeyOthersCanReadIsRefused() throws {
        let folder = try VICALScopeTests.Folder()
        let key = try PrivateKey.generate(curve: .p256)
        let message = try folder.loadError(try Self.tenant(folder, certificate: try Self.certificate(for: key), key: key, keyMode: 0o644))
        #expect(message.hasPrefix("tenants[0].webReader.privateKey"), "\(message)")
    }
}
