import CommandLineSupport
import Crypto
import Foundation
import JSON
import MDoc
import SessionAPI
import Verification

/// `veridoc keys …`: every key file a deployment names, made with the
/// permissions its reader insists on, never over an existing file; and the
/// hashes the config keeps instead of keys.
enum KeysCommand {
    static func run(_ arguments: [String]) -> Int32 {
        do {
            switch (arguments.first, arguments.count) {
            case ("generate", 2): try generate(into: URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("hash", 2): print(try hash(of: try ParsedArguments.path(arguments[1])))
            case ("api-key", 1): apiKey()
            case ("generate-replay-key", 2): try generateReplayKey(URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("generate-signing-key", 2): try generateSigningKey(URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("generate-webhook-secret", 2): try generateWebhookSecret(URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("generate-webhook-key", 2): try generateWebhookKey(URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("generate-outcome-key", 2): try generateOutcomeKey(into: URL(fileURLWithPath: try ParsedArguments.path(arguments[1])))
            case ("generate-data-key", _): return RetentionCommands.generateDataKey(Array(arguments.dropFirst()))
            case ("rotate-data-key", _): return RetentionCommands.rotateDataKey(Array(arguments.dropFirst()))
            default: throw UsageError("keys generate DIR | keys hash FILE | keys api-key | keys generate-replay-key FILE | keys generate-signing-key FILE | "
                                      + "keys generate-webhook-secret FILE | keys generate-webhook-key FILE | keys generate-outcome-key DIR | keys generate-data-key FILE | keys rotate-data-key --config FILE")
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

    /// `replay.nonceKeyFile`: 32 random bytes, base64, readable by its owner
    /// only; every worker and serve of the deployment shares the one file.
    private static func generateReplayKey(_ url: URL) throws {
        try writeSecret(Data(secureRandomBytes(32)).base64EncodedString() + "\n", to: url)
        print("replay key written to \(url.path) (mode 0600); name it in replay.nonceKeyFile, the same file for every worker and serve")
    }

    /// A P-256 signing key (PKCS#8 PEM, 0600) for `readerTokens.signingKey`,
    /// or the key of a `webReader` or `openID4VPVerifier` certificate, and its
    /// public key beside it (FILE.pub.pem) for the registration or the CSR.
    private static func generateSigningKey(_ url: URL) throws {
        let key = try PrivateKey.generate(curve: .p256)
        let publicURL = URL(fileURLWithPath: url.path + ".pub.pem")
        guard !FileManager.default.fileExists(atPath: publicURL.path) else { throw UsageError("\(publicURL.path) exists; refusing to overwrite a key") }
        try writeSecret(try key.pkcs8PEM(), to: url)
        try Data(key.publicKey.pem.utf8).write(to: publicURL)
        print("signing key: \(url.path) (mode 0600)")
        print("public key:  \(publicURL.path)")
    }

    /// A webhook endpoint's `secrets` entry: `whsec_` and 32 random bytes in
    /// base64 (Standard Webhooks), 0600. The receiver verifies with the same
    /// value, so it is handed over as the file's content, never printed.
    private static func generateWebhookSecret(_ url: URL) throws {
        try writeSecret("whsec_" + Data(secureRandomBytes(32)).base64EncodedString() + "\n", to: url)
        print("webhook secret written to \(url.path) (mode 0600): name it in the endpoint's secrets; the receiver verifies with the same secret, the file's content")
    }

    /// A webhook endpoint's `signingKey`: an Ed25519 key (PKCS#8 PEM, 0600)
    /// whose public key receivers verify `v1a` signatures with; printed as
    /// Standard Webhooks writes it, and served by `veridoc serve`.
    private static func generateWebhookKey(_ url: URL) throws {
        let key = try PrivateKey.generateEd25519()
        try writeSecret(try key.pkcs8PEM(), to: url)
        guard let raw = key.publicKey.ed25519Raw else { throw UsageError("the new key has no Ed25519 public key") }
        print("signing key: \(url.path) (mode 0600)")
        print("public key:  whpk_\(Data(raw).base64EncodedString())")
    }

    /// An outcome recipient key pair: the private key (0600) for the
    /// integrator, who alone opens the sealed claims, and the public key for
    /// the tenant's `outcomeRecipientKey`.
    private static func generateOutcomeKey(into directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let privateURL = directory.appendingPathComponent("outcome-recipient-key.pem")
        let publicURL = directory.appendingPathComponent("outcome-recipient.pem")
        guard !FileManager.default.fileExists(atPath: publicURL.path) else { throw UsageError("\(publicURL.path) exists; refusing to overwrite a key") }
        let key = try PrivateKey.generate(curve: .p256)
        try writeSecret(try key.pkcs8PEM(), to: privateURL)
        try Data(key.publicKey.pem.utf8).write(to: publicURL)
        print("private key: \(privateURL.path) (mode 0600): give it to the integrator, never into Veridoc's config")
        print("public key:  \(publicURL.path): the tenant's outcomeRecipientKey")
    }

    /// `text` into a new file only its owner can read, created that way (never readable by others, not even briefly).
    private static func writeSecret(_ text: String, to url: URL) throws {
        guard !FileManager.default.fileExists(atPath: url.path) else { throw UsageError("\(url.path) exists; refusing to overwrite a key") }
        guard FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw UsageError("cannot write \(url.path)")
        }
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
