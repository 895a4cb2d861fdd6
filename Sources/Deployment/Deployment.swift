import Crypto
import Foundation
import Retention
import Revocation
import Settings
import Verification
import Webhooks

/// The config file as the product runs it, made in one step: the file read
/// once, strictly, into typed sections (listeners, brokers, stores, limits),
/// and every file it names read by `KeyFile` under one rule: each tenant's
/// keys and trust, the data keys, the replay key, serve's TLS files. Every
/// command that takes `--config` starts from this value, so none reads the
/// file, or a key, a second time or by a rule of its own.
///
/// Strict for every command alike: `stats` refuses a config the worker would
/// refuse, so a deployment that one command accepts, all accept.
public struct Deployment: Sendable {
    /// Each section typed, `VERIDOC_…` variables applied; paths resolve against `settings.baseURL`.
    public let settings: VeridocSettings
    /// The one tenant type (`Tenant`), keys and trust loaded, matched by the
    /// id's bytes (`IdentityRule`): what the worker, serve, retention and
    /// analytics all look tenants up in.
    public let tenants: TenantDirectory
    /// The data keys that seal stored values, and the purge's pace.
    public let retention: RetentionConfiguration
    /// `replay.nonceKeyFile`'s bytes; nil where the file names none.
    public let replayKey: [UInt8]?
    /// `serve.tls`'s certificate chain and key, as PEM text; nil: serve speaks plain HTTP.
    public let serveTLS: ServeTLS?
    /// How revocation lists are fetched and kept (`statusLists`), its CA file checked.
    public let statusLists: StatusService.Configuration
    /// Every tenant's webhook endpoints, their secrets and keys read (`tenants[].webhooks`, `webhooks`).
    public let webhooks: WebhookDirectory

    public struct ServeTLS: Sendable {
        public let certificatePEM: String
        public let keyPEM: String
    }

    /// VICALs are authenticated at `time` (their signers expire like any
    /// certificate, and a list past its nextUpdate is refused).
    public init(_ settings: VeridocSettings, at time: Date = Date()) throws(ConfigError) {
        self.settings = settings
        tenants = try Configuration.load(settings, at: time).directory
        retention = try RetentionConfiguration.load(settings)
        replayKey = try ReplayKey.loadIfNamed(settings)
        serveTLS = try settings.serve.tls.map { (tls) throws(ConfigError) in try Self.readTLS(tls, settings: settings) }
        let caFile = try settings.statusLists.http.caFile.map { (file) throws(ConfigError) in try Self.checkedCAFile(file, settings: settings) }
        statusLists = StatusService.Configuration(settings.statusLists, caFile: caFile)
        webhooks = try Self.loadWebhooks(settings)
    }

    /// Each endpoint's URL judged by the deployment's rule, its secrets and key read by `KeyFile`.
    private static func loadWebhooks(_ settings: VeridocSettings) throws(ConfigError) -> WebhookDirectory {
        let rules = settings.webhooks
        var endpoints: [WebhookEndpoint] = []
        for tenant in settings.tenants {
            for hook in tenant.webhooks {
                if let problem = WebhookEndpoint.problem(url: hook.url, allowInsecure: rules.http.allowInsecure) {
                    throw ConfigError("\(hook.setting).url: \(problem)")
                }
                var secrets: [[UInt8]] = []
                for (index, file) in hook.secrets.enumerated() {
                    secrets.append(try KeyFile.webhookSecret(settings.resolve(file), setting: "\(hook.setting).secrets[\(index)]"))
                }
                var keys: [PrivateKey] = []
                for (index, file) in hook.signingKeys.enumerated() {
                    let setting = hook.signingKeys.count == 1 ? "\(hook.setting).signingKey" : "\(hook.setting).signingKey[\(index)]"
                    let key = try KeyFile.privateKey(settings.resolve(file), setting: setting)
                    guard key.type == .ed25519 else {
                        throw ConfigError("\(setting): an Ed25519 key is required (veridoc keys generate-webhook-key makes one)")
                    }
                    guard !keys.contains(where: { $0.publicKey.ed25519Raw == key.publicKey.ed25519Raw }) else {
                        throw ConfigError("\(setting): the same key as another of the endpoint's signing keys")
                    }
                    keys.append(key)
                }
                endpoints.append(WebhookEndpoint(tenant: tenant.id, id: hook.id, url: hook.url, eventTypes: hook.events,
                                                 signer: WebhookSigner(secrets: secrets, signingKeys: keys),
                                                 maxConcurrency: hook.maxConcurrency, maxPerSecond: hook.maxPerSecond))
            }
        }
        let caFile = try rules.http.caFile.map { (file) throws(ConfigError) in try checkedCAFile(file, setting: "webhooks.caFile", settings: settings) }
        return WebhookDirectory(endpoints: endpoints, settings: rules, caFile: caFile)
    }

    /// The CA file's path, once it reads as PEM certificates (libcurl reads it at each fetch).
    private static func checkedCAFile(_ file: String, setting: String = "statusLists.caFile", settings: VeridocSettings) throws(ConfigError) -> String {
        let url = settings.resolve(file)
        let text = String(decoding: try KeyFile.read(url, setting: setting, .published), as: UTF8.self)
        guard let certificates = try? Certificate.parsePEM(text), !certificates.isEmpty else {
            throw ConfigError("\(setting): \(url.path) holds no PEM certificate")
        }
        return url.path
    }

    private static func readTLS(_ tls: ServeSettings.TLS, settings: VeridocSettings) throws(ConfigError) -> ServeTLS {
        let certificate = settings.resolve(tls.certificateFile)
        let key = settings.resolve(tls.keyFile)
        let certificatePEM = String(decoding: try KeyFile.read(certificate, setting: "serve.tls.certificateFile", .published), as: UTF8.self)
        guard certificatePEM.contains("-----BEGIN CERTIFICATE-----") else {
            throw ConfigError("serve.tls.certificateFile: \(certificate.path) is not a readable PEM certificate")
        }
        // Kept as PEM text: libmicrohttpd takes the key that way.
        let keyPEM = String(decoding: try KeyFile.read(key, setting: "serve.tls.keyFile", .secret), as: UTF8.self)
        guard keyPEM.contains("PRIVATE KEY-----") else {
            throw ConfigError("serve.tls.keyFile: \(key.path) is not a readable PEM private key")
        }
        return ServeTLS(certificatePEM: certificatePEM, keyPEM: keyPEM)
    }

    public static func load(from file: URL, at time: Date = Date(),
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> Deployment {
        try Deployment(VeridocSettings.load(from: file, environment: environment), at: time)
    }

    /// The replay key, for the commands that cannot run without one (the
    /// worker keys single-use nonces with it; serve issues nonces under it).
    public func requiredReplayKey() throws(ConfigError) -> [UInt8] {
        guard let replayKey else { throw ReplayKey.missing }
        return replayKey
    }
}
