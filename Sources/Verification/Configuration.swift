import Crypto
import Foundation
import MDoc
import Settings

/// A configuration problem, naming the setting (never a key's contents).
public typealias ConfigError = Settings.ConfigError

/// The tenants of the config file (Schemas/config.schema.json), with their
/// keys, trust anchors and VICALs read. Paths are relative to the file's own
/// folder.
public struct Configuration: Sendable {
    public let directory: TenantDirectory
    /// The file's folder, against which relative paths resolve.
    public let baseURL: URL

    /// Reads the file and loads its tenants. VICALs are authenticated at
    /// `time` (their signers expire like any certificate).
    public static func load(from file: URL, at time: Date = Date()) throws(ConfigError) -> Configuration {
        try load(VeridocSettings.load(from: file), at: time)
    }

    public static func load(_ settings: VeridocSettings, at time: Date = Date()) throws(ConfigError) -> Configuration {
        guard !settings.tenants.isEmpty else { throw ConfigError("tenants: a non-empty array is required") }
        var tenants: [Tenant] = []
        for entry in settings.tenants {
            let tenant = try loadTenant(entry, settings: settings, time: time)
            // Settings has refused duplicate and confusable ids (`IdentityRule`).
            tenants.append(tenant)
        }
        return Configuration(directory: TenantDirectory(tenants), baseURL: settings.baseURL)
    }

    private static func loadTenant(_ entry: TenantSettings, settings: VeridocSettings, time: Date) throws(ConfigError) -> Tenant {
        let path = entry.path
        var keys: [TenantKey] = []
        for (index, file) in entry.encryptionKeys.enumerated() {
            let setting = "\(path).encryptionKeys[\(index)]"
            let key = try KeyFile.privateKey(settings.resolve(file), setting: setting)
            do { keys.append(try TenantKey(key)) } catch { throw ConfigError("\(setting): \(error.message)") }
        }

        // A production tenant never trusts Apple's test issuer, however it is listed.
        let production = entry.testConditions == nil
        var anchors = try loadCertificateList(entry.trustAnchors, setting: "\(path).trustAnchors", settings: settings, production: production)
        var listed: [ListedAnchor] = []
        var deadlines: [TrustListDeadline] = []
        for (index, vical) in entry.vicals.enumerated() {
            let loaded = try loadVICAL(vical, setting: "\(path).vicals[\(index)]", settings: settings, time: time)
            if production { try refuseTestIssuers(loaded.anchors.map(\.certificate), setting: "\(path).vicals[\(index)].file", source: loaded.name) }
            listed += loaded.anchors
            if let deadline = loaded.deadline { deadlines.append(deadline) }
        }
        // Signers trusted as they are: a setting of its own, never implied by
        // trustAnchors, whose certificates may issue signers but not be one.
        let pinned = try loadCertificateList(entry.pinnedDocumentSigners, setting: "\(path).pinnedDocumentSigners", settings: settings,
                                             production: production)
        // A test tenant trusts its test roots only (Settings refuses production trust beside them), and may
        // have none: the Simulator's responses and a developer profile's without issuer signature need none.
        var testConditions: TestConditions?
        if let test = entry.testConditions {
            for (index, entry) in test.trustAnchors.enumerated() {
                anchors += try loadCertificates(settings.resolve(entry), setting: "\(path).testConditions.trustAnchors[\(index)]")
            }
            testConditions = TestConditions(kinds: Set(test.kinds.map(TestKind.init)))
        }
        guard !anchors.isEmpty || !listed.isEmpty || !pinned.isEmpty || testConditions != nil else {
            throw ConfigError("\(path): no trust anchors (trustAnchors, vicals or pinnedDocumentSigners) configured")
        }

        var defaults: [TenantRetention.Default] = []
        for (index, entry) in entry.retentionDefaults.enumerated() {
            if defaults.contains(where: { $0.namespace == entry.namespace && $0.element == entry.element }) {
                throw ConfigError("\(path).retentionDefaults[\(index)]: duplicate default for \(entry.namespace)/\(entry.element)")
            }
            let retention: Retention = switch entry.intent {
            case .willNotStore: .willNotStore
            case .mayStore(let days): .mayStore(days: days)
            }
            defaults.append(TenantRetention.Default(namespace: entry.namespace, element: entry.element, retention: retention))
        }
        var recipient: PublicKey?
        if let file = entry.outcomeRecipientKey {
            recipient = try loadP256PublicKey(settings.resolve(file), setting: "\(path).outcomeRecipientKey")
        }
        var readers: [String: PublicKey] = [:]
        for (index, reader) in entry.readers.enumerated() {
            readers[reader.id] = try loadP256PublicKey(settings.resolve(reader.publicKey), setting: "\(path).readers[\(index)].publicKey")
        }
        var readerTokenKey: ReaderTokenKey?
        if let tokens = entry.readerTokens {
            let setting = "\(path).readerTokens.signingKey"
            let key = try KeyFile.privateKey(settings.resolve(tokens.signingKey), setting: setting)
            guard key.type == .ec(.p256) else { throw ConfigError("\(setting): reader tokens are ES256, so the key must be a P-256 key") }
            readerTokenKey = ReaderTokenKey(brandID: tokens.brandID, keyID: tokens.keyID, signingKey: key)
        }
        var webReaders: [ReaderSigner] = []
        for reader in entry.webReaders {
            let (key, certificates) = try loadSigningChain(certificates: reader.certificates, privateKey: reader.privateKey,
                                                           setting: reader.setting, settings: settings)
            webReaders.append(ReaderSigner(key: key, certificates: certificates.map(\.der)))
        }
        var openID4VPVerifiers: [OpenID4VPVerifierIdentity] = []
        for verifier in entry.openID4VPVerifiers {
            let (key, certificates) = try loadSigningChain(certificates: verifier.certificates, privateKey: verifier.privateKey,
                                                           setting: verifier.setting, settings: settings)
            openID4VPVerifiers.append(try OpenID4VPVerifierIdentity(key: key, certificates: certificates, prefix: verifier.clientIDPrefix,
                                                                    setting: verifier.setting))
        }
        return Tenant(
            id: entry.id, merchantIDs: Set(entry.merchantIDs), teamID: entry.teamID, keys: keys, trustAnchors: anchors,
            pinnedDocumentSigners: pinned, listedAnchors: listed, trustListDeadlines: deadlines, origins: Set(entry.origins), maxRequestAge: TimeInterval(entry.maxRequestAgeSeconds ?? 600),
            maxSessionSeconds: entry.maxSessionSeconds,
            retention: TenantRetention(maxDays: entry.maxRetentionDays, defaults: defaults), outcomeRecipientKey: recipient,
            requireIssuedNonces: entry.requireIssuedNonces, requestAllowlist: RequestAllowlist(entry.requestableElements), testConditions: testConditions, readers: readers,
            acceptsOpenID4VPTranscripts: entry.acceptOpenID4VPTranscripts,
            acceptsUnencryptedOpenID4VP: entry.acceptUnencryptedOpenID4VP, apiKeyHashes: entry.apiKeyHashes, readerTokenKey: readerTokenKey,
            statusPolicy: entry.status, webReader: SignerRotation(webReaders), openID4VPVerifier: SignerRotation(openID4VPVerifiers),
            allowsUnsignedOpenID4VPRequests: entry.openID4VPUnsignedRequests, digitalCredentialsProtocols: entry.digitalCredentialsProtocols)
    }

    /// A signing identity's certificates (leaf first) and key (the web
    /// reader's, the OpenID4VP verifier's): a P-256 key, the one the leaf
    /// certifies, since a request signed by another key would name a signer
    /// it does not come from.
    private static func loadSigningChain(certificates file: String, privateKey keyFile: String, setting: String,
                                         settings: VeridocSettings) throws(ConfigError) -> (PrivateKey, [Certificate]) {
        let certificates = try loadCertificates(settings.resolve(file), setting: "\(setting).certificates")
        let key = try KeyFile.privateKey(settings.resolve(keyFile), setting: "\(setting).privateKey")
        guard key.type == .ec(.p256) else { throw ConfigError("\(setting).privateKey: it signs with ES256, so the key must be a P-256 key") }
        let name = setting.split(separator: ".").last.map(String.init) ?? setting
        guard let leaf = certificates.first, let certified = try? leaf.publicKey(), certified.uncompressedPoint == key.publicKey.uncompressedPoint else {
            throw ConfigError("\(setting).certificates: the first certificate must certify \(name).privateKey")
        }
        return (key, certificates)
    }

    /// A VICAL's IACAs, each with the docTypes its entry names, trusted until
    /// the list's nextUpdate plus `graceSeconds`. A list already past that at
    /// `time` is refused: its publisher has said a newer one exists, which may
    /// have withdrawn an IACA.
    private static func loadVICAL(_ entry: TenantSettings.VICAL, setting: String, settings: VeridocSettings, time: Date) throws(ConfigError)
        -> (anchors: [ListedAnchor], deadline: TrustListDeadline?, name: String)
    {
        var vicalAnchors: [Certificate] = []
        for (index, anchor) in entry.anchors.enumerated() {
            vicalAnchors += try loadCertificates(settings.resolve(anchor), setting: "\(setting).anchors[\(index)]")
        }
        let url = settings.resolve(entry.file)
        let bytes = try KeyFile.read(url, setting: "\(setting).file", .published)
        let vical: VICAL
        do {
            vical = try VICAL(bytes: bytes, anchors: TrustStore(anchors: vicalAnchors), at: time)
        } catch {
            throw ConfigError("\(setting).file: \(url.lastPathComponent) is not an authentic VICAL: \(error)")
        }
        let list = "\(setting) (\(url.lastPathComponent))"
        var deadline: TrustListDeadline?
        if let nextUpdate = vical.nextUpdate {
            let staleAfter = nextUpdate + TimeInterval(entry.graceSeconds)
            guard time <= staleAfter else {
                let grace = entry.graceSeconds == 0 ? "" : " plus graceSeconds \(entry.graceSeconds)"
                throw ConfigError("\(setting).file: \(url.path) is stale: its nextUpdate \(RFC3339.string(from: nextUpdate))\(grace) has passed; "
                    + "fetch the current list from its publisher")
            }
            deadline = TrustListDeadline(list: list, nextUpdate: nextUpdate, staleAfter: staleAfter)
        }
        let anchors = vical.entries.map { entry in
            ListedAnchor(certificate: entry.certificate, docTypes: entry.docTypes, list: list, trustedUntil: deadline?.staleAfter)
        }
        return (anchors, deadline, url.path)
    }

    /// The certificates of a list of PEM files or folders (`trustAnchors`,
    /// `pinnedDocumentSigners`); Apple's test issuer refused for a production tenant.
    private static func loadCertificateList(_ files: [String], setting list: String, settings: VeridocSettings,
                                            production: Bool) throws(ConfigError) -> [Certificate] {
        var all: [Certificate] = []
        for (index, file) in files.enumerated() {
            let setting = "\(list)[\(index)]"
            let url = settings.resolve(file)
            let certificates = try loadCertificates(url, setting: setting)
            if production { try refuseTestIssuers(certificates, setting: setting, source: url.path) }
            all += certificates
        }
        return all
    }

    /// Apple's test issuer in a production tenant's trust is a configuration
    /// error: it signs mock IDs that anyone with a developer profile can get.
    private static func refuseTestIssuers(_ certificates: [Certificate], setting: String, source: String) throws(ConfigError) {
        for certificate in certificates {
            guard let name = KnownTestIssuers.name(of: certificate) else { continue }
            let fingerprint = certificate.sha256Fingerprint.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            throw ConfigError("\(setting): \(source) holds Apple's test issuer \"\(name)\" (SHA-256 \(fingerprint)), which only a test tenant "
                + "may trust: list it in a tenant of its own under testConditions.trustAnchors")
        }
    }

    /// A PEM P-256 public key (SubjectPublicKeyInfo).
    static func loadP256PublicKey(_ url: URL, setting: String) throws(ConfigError) -> PublicKey {
        let pem = String(decoding: try KeyFile.read(url, setting: setting, .published), as: UTF8.self)
        guard let key = try? PublicKey(pem: pem), key.curve == .p256 else {
            throw ConfigError("\(setting): \(url.path) holds no PEM P-256 public key (SubjectPublicKeyInfo)")
        }
        return key
    }

    /// A PEM file (one or more certificates) or a folder of them.
    static func loadCertificates(_ url: URL, setting: String) throws(ConfigError) -> [Certificate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ConfigError("\(setting): \(url.path) does not exist")
        }
        let files: [URL]
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
            files = names.filter { $0.hasSuffix(".pem") || $0.hasSuffix(".crt") || $0.hasSuffix(".cer") }.sorted().map { url.appendingPathComponent($0) }
            guard !files.isEmpty else { throw ConfigError("\(setting): folder \(url.path) holds no .pem/.crt files") }
        } else {
            files = [url]
        }
        var certificates: [Certificate] = []
        for file in files {
            let text = String(decoding: try KeyFile.read(file, setting: setting, .published), as: UTF8.self)
            guard let parsed = try? Certificate.parsePEM(text), !parsed.isEmpty else {
                throw ConfigError("\(setting): \(file.path) holds no PEM certificate")
            }
            certificates += parsed
        }
        return certificates
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
