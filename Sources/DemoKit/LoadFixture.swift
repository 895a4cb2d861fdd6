import Crypto
import Foundation
import TestIssuer

/// The synthetic tenant and issuer the load generator produces for, saved to a
/// folder so that a worker can be configured with it (`config.json`, the
/// merchant keys, the IACA) and later load-generator runs reuse it.
public enum LoadFixture {
    /// Loads the fixture in `directory`, or makes and saves one there.
    public static func openOrCreate(_ directory: URL, now: Date = Date(), seed: UInt64) throws -> (factory: TestIssuer.EventFactory, created: Bool) {
        let metadata = directory.appendingPathComponent("fixture.json")
        if FileManager.default.fileExists(atPath: metadata.path) {
            return (try load(directory, now: now, seed: seed), false)
        }
        let factory = try TestIssuer.EventFactory(now: now, seed: seed)
        try save(factory, to: directory)
        return (factory, true)
    }

    static func save(_ factory: TestIssuer.EventFactory, to directory: URL) throws {
        let merchant = factory.merchant
        let authority = factory.authority
        try merchant.writeConfiguration(to: directory, trustAnchors: [authority.iaca])
        let issuer = directory.appendingPathComponent("issuer")
        try FileManager.default.createDirectory(at: issuer, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func write(_ text: String, _ name: String, _ permissions: Int) throws {
            let path = issuer.appendingPathComponent(name).path
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: permissions]) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        try write(try authority.iacaKey.pkcs8PEM(), "iaca-key.pem", 0o600)
        try write(TestIssuer.PEM.certificates([authority.iaca]), "iaca.pem", 0o644)
        try write(try authority.documentSignerKey.pkcs8PEM(), "ds-key.pem", 0o600)
        try write(TestIssuer.PEM.certificates([authority.documentSigner]), "ds.pem", 0o644)
        try write(try factory.holder.deviceKey.pkcs8PEM(), "device-key.pem", 0o600)
        let metadata: [String: Any] = [
            "curve": authority.curve.rawValue, "name": authority.name, "state": authority.state,
            "tenantId": merchant.tenantID, "merchantId": merchant.merchantID, "teamId": merchant.teamID, "origin": merchant.origin,
            "maxRequestAgeSeconds": merchant.maxRequestAgeSeconds,
        ]
        try JSONSerialization.data(withJSONObject: metadata, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            .write(to: directory.appendingPathComponent("fixture.json"))
    }

    public static func load(_ directory: URL, now: Date, seed: UInt64) throws -> TestIssuer.EventFactory {
        let metadata = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("fixture.json"))) as? [String: Any] ?? [:]
        func text(_ relative: String) throws -> String { try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8) }
        func string(_ key: String) throws -> String {
            guard let value = metadata[key] as? String else { throw CocoaError(.fileReadCorruptFile) }
            return value
        }
        guard let curve = Curve(rawValue: try string("curve")),
              let iaca = try Certificate.parsePEM(try text("issuer/iaca.pem")).first,
              let signer = try Certificate.parsePEM(try text("issuer/ds.pem")).first
        else { throw CocoaError(.fileReadCorruptFile) }
        let authority = TestIssuer.Authority(
            curve: curve, name: try string("name"), state: try string("state"), iacaKey: try PrivateKey(pem: try text("issuer/iaca-key.pem")), iaca: iaca,
            documentSignerKey: try PrivateKey(pem: try text("issuer/ds-key.pem")), documentSigner: signer)
        let merchant = TestIssuer.Merchant(
            tenantID: try string("tenantId"), merchantID: try string("merchantId"), teamID: try string("teamId"), origin: try string("origin"),
            maxRequestAgeSeconds: metadata["maxRequestAgeSeconds"] as? Int ?? 600,
            currentKey: try PrivateKey(pem: try text("pki/merchant-current.pem")), rotatedKey: try PrivateKey(pem: try text("pki/merchant-rotated.pem")),
            readerKey: (try? text("pki/reader.pem")).flatMap { try? PrivateKey(pem: $0) })
        var random = TestIssuer.SeededRandom(seed: seed)
        let credential = TestIssuer.Credential.mobileDrivingLicence(now: now, using: &random)
        return TestIssuer.EventFactory(
            authority: authority, merchant: merchant, holder: TestIssuer.Holder(deviceKey: try PrivateKey(pem: try text("issuer/device-key.pem"))),
            credential: credential, now: now, seed: random.next())
    }
}
