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
}
