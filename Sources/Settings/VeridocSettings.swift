import Foundation
import JSON

/// The config file (Schemas/config.schema.json), read once with the
/// project's strict JSON parser into one typed section per part of the
/// product, each `VERIDOC_…` environment variable already applied. Every
/// object refuses a member it does not know, so a misspelt setting is an
/// error at start, not a silent default. Paths stay as written; `baseURL`
/// resolves relative ones.
public struct VeridocSettings: Sendable, Equatable {
    /// The file's folder, against which relative paths resolve.
    public var baseURL: URL
    public var tenants: [TenantSettings] = []
    public var kafka = KafkaSettings()
    public var postgres = PostgresSettings()
    public var worker = WorkerSettings()
    public var replay = ReplaySettings()
    public var observability = ObservabilitySettings()
    public var retention = RetentionSettings()
    public var serve = ServeSettings()
    public var statusLists = StatusListSettings()
    public var webhooks = WebhookSettings()

    /// The largest config file read: far beyond any real one, and bounded so
    /// a wrong path (a device, a log) cannot take the process's memory.
    public static let maxFileBytes = 16 << 20

    public static func load(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> VeridocSettings {
        guard let handle = FileHandle(forReadingAtPath: file.path),
              let data = try? handle.read(upToCount: maxFileBytes + 1)
        else { throw ConfigError("cannot read config file \(file.path)") }
        try? handle.close()
        guard data.count <= maxFileBytes else { throw ConfigError("config file \(file.path) is larger than \(maxFileBytes >> 20) MB") }
        let root: JSONValue
        do {
            root = try JSONParser().parse(Array(data))
        } catch {
            throw ConfigError("config file \(file.path) is not JSON: \(error)")
        }
        guard root.objectValue != nil else { throw ConfigError("config file \(file.path) is not a JSON object") }
        return try VeridocSettings(root, baseURL: file.deletingLastPathComponent(), environment: environment)
    }

    public init(_ root: JSONValue, baseURL: URL, environment: [String: String] = [:]) throws(ConfigError) {
        self.baseURL = baseURL
        let environment = Environment(variables: environment)
        var file = try SettingsObject(root, path: "")
        // For editors; Veridoc does not read it.
        _ = try file.string("$schema")
        tenants = try file.objects("tenants") { (tenant: inout SettingsObject) throws(ConfigError) -> TenantSettings in
            try TenantSettings(&tenant)
        } ?? []
        try Self.refuseConfusableIDs(tenants)
        kafka = try KafkaSettings(file.object("kafka"), environment)
        postgres = try PostgresSettings(file.object("postgres"), environment)
        worker = try WorkerSettings(file.object("worker"), environment)
        replay = try ReplaySettings(file.object("replay"), environment)
        observability = try ObservabilitySettings(file.object("observability"), environment)
        retention = try RetentionSettings(file.object("retention"), environment)
        serve = try ServeSettings(file.object("serve"), environment)
        statusLists = try StatusListSettings(file.object("statusLists"))
        webhooks = try WebhookSettings(file.object("webhooks"))
        try file.finish()
    }

    /// Each tenant id once, and no two ids a person could not tell apart
    /// (`IdentityRule`): tenant ids, and merchant ids across all tenants.
    static func refuseConfusableIDs(_ tenants: [TenantSettings]) throws(ConfigError) {
        let ids = tenants.map(\.id)
        for (index, id) in ids.enumerated() where ids[..<index].contains(where: { IdentityRule.same($0, id) }) {
            throw ConfigError("tenants[\(index)].id: duplicate tenant id \(id)")
        }
        if let (first, second) = IdentityRule.firstConfusablePair(ids) {
            throw ConfigError("tenants[\(second)].id: looks the same as tenants[\(first)].id (Unicode-equivalent, other bytes); ids are matched by their bytes")
        }
        let merchants = tenants.enumerated().flatMap { tenant in tenant.element.merchantIDs.indices.map { (tenant.offset, $0) } }
        if let (first, second) = IdentityRule.firstConfusablePair(merchants.map { tenants[$0.0].merchantIDs[$0.1] }) {
            throw ConfigError("tenants[\(merchants[second].0)].merchantIds[\(merchants[second].1)]: looks the same as "
                + "tenants[\(merchants[first].0)].merchantIds[\(merchants[first].1)] (Unicode-equivalent, other bytes); ids are matched by their bytes")
        }
    }

    /// A path of the file, resolved against its folder.
    public func resolve(_ path: String) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : baseURL.appendingPathComponent(path)
    }
}
