/// The `retention` section: data keys for stored values and the purge loop's pace.
public struct RetentionSettings: Sendable, Equatable {
    public struct DataKey: Sendable, Equatable {
        public var id: String
        public var file: String
    }

    public var dataKeys: [DataKey] = []
    /// `VERIDOC_ACTIVE_DATA_KEY`; required with `dataKeys`.
    public var activeKey: String?
    public var purgeIntervalSeconds = 60
    /// Rows per DELETE or re-encryption statement.
    public var purgeBatchSize = 1_000
    /// How long a session stays after it expired, for a late `GET`.
    public var sessionKeepSeconds = 3_600

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        dataKeys = try section?.objects("dataKeys") { (entry: inout SettingsObject) throws(ConfigError) -> DataKey in
            guard let id = try? entry.nonEmptyString("id"), let file = try? entry.nonEmptyString("file") else {
                throw ConfigError("\(entry.path): {\"id\", \"file\"} is required")
            }
            return DataKey(id: id, file: file)
        } ?? []
        for (index, key) in dataKeys.enumerated() where dataKeys[..<index].contains(where: { $0.id == key.id }) {
            throw ConfigError("retention.dataKeys[\(index)].id: duplicate data key id \(key.id)")
        }
        let active = try section?.string("activeKey")
        if active != nil && dataKeys.isEmpty { throw ConfigError("retention.activeKey: set without retention.dataKeys") }
        activeKey = environment["VERIDOC_ACTIVE_DATA_KEY"] ?? active
        if !dataKeys.isEmpty && (activeKey ?? "").isEmpty { throw ConfigError("retention.activeKey: required with retention.dataKeys") }
        purgeIntervalSeconds = try environment.integer("VERIDOC_PURGE_INTERVAL_SECONDS", over: "purgeIntervalSeconds", in: &section, range: 1...86_400) ?? purgeIntervalSeconds
        let purgeBatchSizeFromFile = try section?.integer("purgeBatchSize", range: 1...50_000)
        purgeBatchSize = purgeBatchSizeFromFile ?? purgeBatchSize
        sessionKeepSeconds = try section?.integer("sessionKeepSeconds", range: 0...2_592_000) ?? sessionKeepSeconds
        try section?.finish()
    }
}
