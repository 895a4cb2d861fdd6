import CommandLineSupport
import Crypto
import Foundation
import JSON
import MDoc
import SessionAPI
import Verification

/// `veridoc keys generate DIR`, `keys hash FILE` and `keys api-key`.
enum KeysCommand {
    static func run(_ arguments: [String]) -> Int32 {
        do {
            switch (arguments.first, arguments.count) {
            case ("generate", 2): try generate(into: URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("hash", 2): print(try hash(of: try ParsedArguments.path(arguments[1])))
            case ("api-key", 1): apiKey()
            case ("generate-data-key", _): return RetentionCommands.generateDataKey(Array(arguments.dropFirst()))
            case ("rotate-data-key", _): return RetentionCommands.rotateDataKey(Array(arguments.dropFirst()))
            default: throw UsageError("keys generate DIR | keys hash FILE | keys api-key | keys generate-data-key FILE | keys rotate-data-key --config FILE")
            }
            return 0
        } catch let error as UsageError {
            Console.error(error.report(otherwise: Usage.text))
        } catch {
            Console.error("\(error)")
        }
        return 2
    }

    /// A merchant encryption key (private key file readable by its owner only)
    /// and a self-signed certificate for it.
    private static func generate(into directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyURL = directory.appendingPathComponent("merchant-key.pem")
        let certificateURL = directory.appendingPathComponent("merchant-cert.pem")
        for url in [keyURL, certificateURL] where FileManager.default.fileExists(atPath: url.path) {
            throw UsageError("\(url.path) exists; refusing to overwrite a key")
        }
        let key = try PrivateKey.generate(curve: .p256)
        let now = Date()
        let certificate = try CertificateBuilder(
            subject: [("CN", "Veridoc merchant encryption key")], publicKey: key.publicKey,
            notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(397 * 86_400)
        ).selfSigned(with: key)
        guard FileManager.default.createFile(atPath: keyURL.path, contents: Data(try key.pkcs8PEM().utf8), attributes: [.posixPermissions: 0o600]) else {
            throw UsageError("cannot write \(keyURL.path)")
        }
        try Data(pem(certificate.der).utf8).write(to: certificateURL)
        print("key:         \(keyURL.path)")
        print("certificate: \(certificateURL.path)")
        print("pkRHash:     \(hex(AppleEnvelope.recipientKeyHash(of: key.publicKey)))")
    }

    /// 32 random bytes as base64url (`vdk_` marks what it is in a secret
    /// scanner), and the hash the config file keeps instead of the key.
    private static func apiKey() {
        let key = "vdk_" + Base64.encodeURL(secureRandomBytes(32))
        print("key:     \(key)")
        print("apiKeys: \"\(APIKeyring.setting(forKey: key))\"")
        print("Give the key to the integrator now: only its hash goes into the config file.")
    }

    private static func hash(of path: String) throws -> String {
        // Through the config's reader for its size bound; a key or certificate to hash need not be the operator's own.
        let text = String(decoding: try KeyFile.read(URL(fileURLWithPath: path), setting: "keys hash", .published), as: UTF8.self)
        let key: PublicKey
        if text.contains("PRIVATE KEY-----") {
            key = try PrivateKey(pem: text).publicKey
        } else if text.contains("CERTIFICATE-----") {
            guard let certificate = try Certificate.parsePEM(text).first else { throw UsageError("\(path) holds no certificate") }
            key = try certificate.publicKey()
        } else {
            key = try PublicKey(pem: text)
        }
        guard key.uncompressedPoint != nil else { throw UsageError("\(path) does not hold an EC key") }
        return hex(AppleEnvelope.recipientKeyHash(of: key))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func pem(_ der: [UInt8]) -> String {
        "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n"
    }
}
