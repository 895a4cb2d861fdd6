import Crypto
import Foundation
import MDoc

/// A configuration problem, naming the setting (never a key's contents).
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The JSON configuration file (Schemas/config.schema.json). Paths are
/// relative to the file's own folder. Later sections (kafka, postgres, …)
/// are read by the parts that need them from `sections`.
public struct Configuration: Sendable {
    public let directory: TenantDirectory
    /// The file's folder, against which relative paths resolve.
    public let baseURL: URL

    /// Loads and resolves the file. VICALs are authenticated at `time`
    /// (their signers expire like any certificate).
    public static func load(from file: URL, at time: Date = Date()) throws(ConfigError) -> Configuration {
        guard let data = try? Data(contentsOf: file) else { throw ConfigError("cannot read config file \(file.path)") }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigError("config file \(file.path) is not a JSON object")
        }
        let base = file.deletingLastPathComponent()
        guard let tenantList = root["tenants"] as? [Any], !tenantList.isEmpty else {
            throw ConfigError("tenants: a non-empty array is required")
        }
        var tenants: [Tenant] = []
        for (index, entry) in tenantList.enumerated() {
            let tenant = try loadTenant(entry, path: "tenants[\(index)]", base: base, time: time)
            // Swift's equality here, not bytes: ids that are Unicode-equivalent
            // are refused too, being two tenants no operator could tell apart.
            guard !tenants.contains(where: { $0.id == tenant.id }) else { throw ConfigError("tenants[\(index)].id: duplicate tenant id \(tenant.id)") }
            tenants.append(tenant)
        }
        return Configuration(directory: TenantDirectory(tenants), baseURL: base)
    }

    private static func loadTenant(_ entry: Any, path: String, base: URL, time: Date) throws(ConfigError) -> Tenant {
        guard let object = entry as? [String: Any] else { throw ConfigError("\(path): a tenant is a JSON object") }
        let known: Set<String> = ["id", "merchantIds", "teamId", "encryptionKeys", "trustAnchors", "origins", "maxRequestAgeSeconds", "vicals",
                                  "pinnedDocumentSigners", "maxRetentionDays", "retentionDefaults", "outcomeRecipientKey"]
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw ConfigError("\(path).\(unknown): unknown tenant setting")
        }
        guard let id = object["id"] as? String, !id.isEmpty, id.utf8.count <= VerificationRequest.maxTenantLength else {
            throw ConfigError("\(path).id: a non-empty string of at most \(VerificationRequest.maxTenantLength) bytes is required")
        }
        let merchantIDs = try strings(object["merchantIds"], "\(path).merchantIds")
        let teamID = object["teamId"].map { $0 as? String }
        if let teamID, teamID?.isEmpty ?? true { throw ConfigError("\(path).teamId: a non-empty string is required") }
        if !merchantIDs.isEmpty && teamID == nil { throw ConfigError("\(path).teamId: required with merchantIds") }
        let origins = try strings(object["origins"], "\(path).origins")

        var keys: [TenantKey] = []
        for (index, file) in try strings(object["encryptionKeys"], "\(path).encryptionKeys").enumerated() {
            let setting = "\(path).encryptionKeys[\(index)]"
            let url = resolve(file, base)
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw ConfigError("\(setting): cannot read \(url.path)") }
            if let problem = KeyFile.permissionProblem(url) { throw ConfigError("\(setting): private key file \(problem)") }
            // Read by OpenSSL itself: the key never sits in a Swift String.
            guard let key = try? PrivateKey(pemFile: url) else { throw ConfigError("\(setting): \(url.path) holds no PEM private key") }
            do { keys.append(try TenantKey(key)) } catch { throw ConfigError("\(setting): \(error.message)") }
        }

        var anchors: [Certificate] = []
        for (index, entry) in try strings(object["trustAnchors"], "\(path).trustAnchors").enumerated() {
            anchors += try loadCertificates(resolve(entry, base), setting: "\(path).trustAnchors[\(index)]")
        }
        if let vicals = object["vicals"] {
            guard let list = vicals as? [Any] else { throw ConfigError("\(path).vicals: an array is required") }
            for (index, vical) in list.enumerated() {
                anchors += try loadVICAL(vical, setting: "\(path).vicals[\(index)]", base: base, time: time)
            }
        }
        // Signers trusted as they are: a setting of its own, never implied by
        // trustAnchors, whose certificates may issue signers but not be one.
        var pinned: [Certificate] = []
        for (index, entry) in try strings(object["pinnedDocumentSigners"], "\(path).pinnedDocumentSigners").enumerated() {
            pinned += try loadCertificates(resolve(entry, base), setting: "\(path).pinnedDocumentSigners[\(index)]")
        }
        guard !anchors.isEmpty || !pinned.isEmpty else {
            throw ConfigError("\(path): no trust anchors (trustAnchors, vicals or pinnedDocumentSigners) configured")
        }

        var maxAge: TimeInterval = 600
        if let value = object["maxRequestAgeSeconds"] {
            guard let seconds = jsonInteger(value), seconds >= 1 else { throw ConfigError("\(path).maxRequestAgeSeconds: a whole number ≥ 1 is required") }
            maxAge = TimeInterval(seconds)
        }
        var maxRetentionDays: Int?
        if let value = object["maxRetentionDays"] {
            guard let days = jsonInteger(value), (1...Retention.maximumDays).contains(days) else {
                throw ConfigError("\(path).maxRetentionDays: a whole number of days from 1 to \(Retention.maximumDays) is required")
            }
            maxRetentionDays = days
        }
        let defaults = try retentionDefaults(object["retentionDefaults"], "\(path).retentionDefaults")
        var recipient: PublicKey?
        if let value = object["outcomeRecipientKey"] {
            let setting = "\(path).outcomeRecipientKey"
            guard let file = value as? String, !file.isEmpty else { throw ConfigError("\(setting): a file path is required") }
            let url = resolve(file, base)
            guard let pem = try? String(contentsOf: url, encoding: .utf8) else { throw ConfigError("\(setting): cannot read \(url.path)") }
            guard let key = try? PublicKey(pem: pem), key.curve == .p256 else {
                throw ConfigError("\(setting): \(url.path) holds no PEM P-256 public key (SubjectPublicKeyInfo)")
            }
            recipient = key
        }
        return Tenant(
            id: id, merchantIDs: Set(merchantIDs), teamID: teamID ?? nil, keys: keys, trustAnchors: anchors,
            pinnedDocumentSigners: pinned, origins: Set(origins), maxRequestAge: maxAge, retention: TenantRetention(maxDays: maxRetentionDays, defaults: defaults),
            outcomeRecipientKey: recipient)
    }

    /// `[{"namespace", "element", "retention": {"intent", "days"?}}]`, the
    /// shape of a request's `requestedElements`.
    private static func retentionDefaults(_ value: Any?, _ setting: String) throws(ConfigError) -> [TenantRetention.Default] {
        guard let value else { return [] }
        guard let list = value as? [Any] else { throw ConfigError("\(setting): an array is required") }
        var defaults: [TenantRetention.Default] = []
        for (index, entry) in list.enumerated() {
            let context = "\(setting)[\(index)]"
            guard let object = entry as? [String: Any], Set(object.keys) == ["namespace", "element", "retention"],
                  let namespace = object["namespace"] as? String, !namespace.isEmpty,
                  let element = object["element"] as? String, !element.isEmpty
            else { throw ConfigError("\(context): {\"namespace\", \"element\", \"retention\"} is required") }
            if namespace == "*" && element != "*" { throw ConfigError("\(context): namespace \"*\" needs element \"*\"") }
            guard let retention = retentionValue(object["retention"]) else {
                throw ConfigError("\(context).retention: {\"intent\": \"willNotStore\"} or {\"intent\": \"mayStore\", \"days\"?: N from 1 to \(Retention.maximumDays)} is required")
            }
            if defaults.contains(where: { $0.namespace == namespace && $0.element == element }) {
                throw ConfigError("\(context): duplicate default for \(namespace)/\(element)")
            }
            defaults.append(TenantRetention.Default(namespace: namespace, element: element, retention: retention))
        }
        return defaults
    }

    private static func retentionValue(_ value: Any?) -> Retention? {
        guard let object = value as? [String: Any], let intent = object["intent"] as? String else { return nil }
        switch (intent, object.count) {
        case ("willNotStore", 1): return .willNotStore
        case ("mayStore", 1): return .mayStore(days: nil)
        case ("mayStore", 2):
            guard let days = object["days"].flatMap(jsonInteger), (1...Retention.maximumDays).contains(days) else { return nil }
            return .mayStore(days: days)
        default: return nil
        }
    }

    private static func loadVICAL(_ entry: Any, setting: String, base: URL, time: Date) throws(ConfigError) -> [Certificate] {
        guard let object = entry as? [String: Any], let file = object["file"] as? String else {
            throw ConfigError("\(setting): {\"file\", \"anchors\"} is required")
        }
        var vicalAnchors: [Certificate] = []
        for (index, anchor) in try strings(object["anchors"], "\(setting).anchors").enumerated() {
            vicalAnchors += try loadCertificates(resolve(anchor, base), setting: "\(setting).anchors[\(index)]")
        }
        guard !vicalAnchors.isEmpty else { throw ConfigError("\(setting).anchors: at least one anchor is required") }
        let url = resolve(file, base)
        guard let bytes = try? Data(contentsOf: url) else { throw ConfigError("\(setting).file: cannot read \(url.path)") }
        do {
            let vical = try VICAL(bytes: Array(bytes), anchors: TrustStore(anchors: vicalAnchors), at: time)
            return vical.entries.map(\.certificate)
        } catch {
            throw ConfigError("\(setting).file: \(url.lastPathComponent) is not an authentic VICAL: \(error)")
        }
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
            guard let text = try? String(contentsOf: file, encoding: .utf8), let parsed = try? Certificate.parsePEM(text), !parsed.isEmpty else {
                throw ConfigError("\(setting): \(file.path) holds no PEM certificate")
            }
            certificates += parsed
        }
        return certificates
    }

    private static func strings(_ value: Any?, _ setting: String) throws(ConfigError) -> [String] {
        guard let value else { return [] }
        guard let list = value as? [Any], list.allSatisfy({ ($0 as? String).map { !$0.isEmpty } ?? false }) else {
            throw ConfigError("\(setting): an array of non-empty strings is required")
        }
        return list.map { $0 as! String }
    }

    private static func resolve(_ path: String, _ base: URL) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path)
    }
}
