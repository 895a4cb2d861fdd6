import Crypto
import Foundation

extension TestIssuer.Merchant {
    /// Writes a config directory `veridoc` can load (Schemas/config.schema.json):
    /// `config.json`, `pki/merchant-current.pem` and `pki/merchant-rotated.pem`
    /// (0600, created that way so the keys are never readable by others, not
    /// even briefly), and one `pki/iaca-N.pem` per trust anchor. Returns the
    /// URL of `config.json`. `tenantSettings` and `settings` add members to
    /// the tenant and to the file (a tenant's `status`, a `statusLists` section).
    @discardableResult
    public func writeConfiguration(to directory: URL, trustAnchors: [Certificate], tenantSettings: [String: Any] = [:],
                                   settings: [String: Any] = [:]) throws -> URL {
        let files = FileManager.default
        let pki = directory.appendingPathComponent("pki")
        try files.createDirectory(at: pki, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])

        func write(_ text: String, _ relative: String, permissions: Int) throws {
            let path = directory.appendingPathComponent(relative).path
            try? files.removeItem(atPath: path)
            guard files.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: permissions]) else {
                throw TestIssuer.FixtureError("cannot write \(path)")
            }
        }
        try write(try currentKey.pkcs8PEM(), "pki/merchant-current.pem", permissions: 0o600)
        try write(try rotatedKey.pkcs8PEM(), "pki/merchant-rotated.pem", permissions: 0o600)
        if let readerKey {
            // The private half only for the load generator's fixture: a real reader keeps it on the device.
            try write(try readerKey.pkcs8PEM(), "pki/reader.pem", permissions: 0o600)
            try write(readerKey.publicKey.pem, "pki/reader-public.pem", permissions: 0o644)
        }
        // The web reader identity serve signs DeviceRequests with: a self-signed
        // stand-in for the certificate Apple Business issues.
        let webReaderKey = try PrivateKey.generate(curve: .p256)
        let webReader = try CertificateBuilder(subject: [("O", "Veridoc Test Merchant"), ("CN", "shop.example.com")], publicKey: webReaderKey.publicKey,
                                               notBefore: Date() - 86_400, notAfter: Date() + 397 * 86_400, serial: 1).selfSigned(with: webReaderKey)
        try write(try webReaderKey.pkcs8PEM(), "pki/web-reader-key.pem", permissions: 0o600)
        try write(TestIssuer.PEM.certificates([webReader]), "pki/web-reader.pem", permissions: 0o644)
        // The OpenID4VP verifier identity serve signs request objects with:
        // self-signed, its dNSName the origin's host (client_id x509_san_dns).
        let verifierKey = try PrivateKey.generate(curve: .p256)
        try write(try verifierKey.pkcs8PEM(), "pki/openid4vp-verifier-key.pem", permissions: 0o600)
        try write(TestIssuer.PEM.certificates([try Self.openID4VPVerifierCertificate(key: verifierKey, origin: origin)]),
                  "pki/openid4vp-verifier.pem", permissions: 0o644)
        var anchorFiles: [String] = []
        for (index, anchor) in trustAnchors.enumerated() {
            let name = "pki/iaca-\(index + 1).pem"
            try write(TestIssuer.PEM.certificates([anchor]), name, permissions: 0o644)
            anchorFiles.append(name)
        }

        var tenant: [String: Any] = [
                "id": tenantID,
                "merchantIds": [merchantID],
                "teamId": teamID,
                "encryptionKeys": ["pki/merchant-current.pem", "pki/merchant-rotated.pem"],
                "trustAnchors": anchorFiles,
                "origins": [origin],
                "webReader": ["certificates": "pki/web-reader.pem", "privateKey": "pki/web-reader-key.pem"],
                "openID4VPVerifier": ["certificates": "pki/openid4vp-verifier.pem", "privateKey": "pki/openid4vp-verifier-key.pem"],
                "maxRequestAgeSeconds": maxRequestAgeSeconds,
        ]
        if readerKey != nil { tenant["readers"] = [["id": Self.readerID, "publicKey": "pki/reader-public.pem"]] }
        tenant.merge(tenantSettings) { _, added in added }
        var config: [String: Any] = ["tenants": [tenant]]
        config.merge(settings) { _, added in added }
        let json = try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try write(String(decoding: json, as: UTF8.self) + "\n", "config.json", permissions: 0o644)
        return directory.appendingPathComponent("config.json")
    }

    /// A self-signed verifier certificate for `key` whose subjectAltName
    /// dNSName is `origin`'s host (or `dnsName`), valid from yesterday to `notAfter` (397 days by default).
    public static func openID4VPVerifierCertificate(key: PrivateKey, origin: String, dnsName: String? = nil,
                                                    notAfter: Date = Date() + 397 * 86_400) throws -> Certificate {
        let host = dnsName ?? URL(string: origin)?.host ?? "shop.example.com"
        var builder = CertificateBuilder(subject: [("O", "Veridoc Test Merchant"), ("CN", host)], publicKey: key.publicKey,
                                         notBefore: Date() - 86_400, notAfter: notAfter, serial: 2)
        builder.keyUsage = .digitalSignature
        builder.extraExtensions = [(oid: "2.5.29.17", critical: false, der: subjectAltName(dnsName: host))]
        return try builder.selfSigned(with: key)
    }

    /// `SubjectAltName ::= GeneralNames`, one `[2] IA5String dNSName` (short: one-byte lengths).
    static func subjectAltName(dnsName: String) -> [UInt8] {
        let name = Array(dnsName.utf8)
        let entry: [UInt8] = [0x82, UInt8(name.count)] + name
        return [0x30, UInt8(entry.count)] + entry
    }
}
