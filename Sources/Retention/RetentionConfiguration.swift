import Foundation
import Verification

/// The config file's `retention` section (Schemas/config.schema.json):
/// data keys for stored values and the purge loop's pace.
public struct RetentionConfiguration: Sendable {
    /// nil: no data keys configured, so no value is ever stored (mayStore
    /// elements keep their metadata only).
    public var keys: DataKeyRing?
    public var purgeInterval: TimeInterval
    /// Rows per DELETE / re-encryption statement: small enough that no
    /// statement holds locks or WAL for long.
    public var purgeBatchSize: Int

    public init(keys: DataKeyRing?, purgeInterval: TimeInterval = 60, purgeBatchSize: Int = 1_000) {
        self.keys = keys
        self.purgeInterval = purgeInterval
        self.purgeBatchSize = purgeBatchSize
    }

    public static func load(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> RetentionConfiguration {
        try load(root: try root(of: file), base: file.deletingLastPathComponent(), environment: environment)
    }

    public static func load(root: [String: Any], base: URL, environment: [String: String]) throws(ConfigError) -> RetentionConfiguration {
        guard let raw = root["retention"] else { return RetentionConfiguration(keys: nil) }
        guard let section = raw as? [String: Any] else { throw ConfigError("retention: an object is required") }
        let known: Set<String> = ["dataKeys", "activeKey", "purgeIntervalSeconds", "purgeBatchSize"]
        if let unknown = section.keys.filter({ !known.contains($0) }).sorted().first { throw ConfigError("retention.\(unknown): unknown setting") }

        var keys: [String: [UInt8]] = [:]
        if let list = section["dataKeys"] {
            guard let entries = list as? [Any] else { throw ConfigError("retention.dataKeys: an array of {\"id\", \"file\"} is required") }
            for (index, entry) in entries.enumerated() {
                let setting = "retention.dataKeys[\(index)]"
                guard let object = entry as? [String: Any], let id = object["id"] as? String, !id.isEmpty,
                      let file = object["file"] as? String, !file.isEmpty, object.count == 2
                else { throw ConfigError("\(setting): {\"id\", \"file\"} is required") }
                guard keys[id] == nil else { throw ConfigError("\(setting).id: duplicate data key id \(id)") }
                let url = file.hasPrefix("/") ? URL(fileURLWithPath: file) : base.appendingPathComponent(file)
                do { keys[id] = try DataKeyRing.loadKeyFile(url) } catch { throw ConfigError("\(setting): \(error.message)") }
            }
        }
        var ring: DataKeyRing?
        if !keys.isEmpty {
            let active = environment["VERIDOC_ACTIVE_DATA_KEY"] ?? (section["activeKey"] as? String) ?? ""
            guard !active.isEmpty else { throw ConfigError("retention.activeKey: required with retention.dataKeys") }
            do { ring = try DataKeyRing(keys: keys, activeID: active) } catch { throw ConfigError(error.message) }
        } else if section["activeKey"] != nil {
            throw ConfigError("retention.activeKey: set without retention.dataKeys")
        }

        let interval = try integer(section["purgeIntervalSeconds"], env: environment["VERIDOC_PURGE_INTERVAL_SECONDS"],
                                   setting: "retention.purgeIntervalSeconds", default: 60, range: 1...86_400)
        let batch = try integer(section["purgeBatchSize"], env: nil, setting: "retention.purgeBatchSize", default: 1_000, range: 1...50_000)
        return RetentionConfiguration(keys: ring, purgeInterval: TimeInterval(interval), purgeBatchSize: batch)
    }

    private static func integer(_ value: Any?, env: String?, setting: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let number: Int
        if let env {
            guard let parsed = Int(env) else { throw ConfigError("\(setting): a whole number is required") }
            number = parsed
        } else if let value {
            guard let parsed = value as? NSNumber, String(cString: parsed.objCType) != "c", parsed.doubleValue == parsed.doubleValue.rounded() else {
                throw ConfigError("\(setting): a whole number is required")
            }
            number = parsed.intValue
        } else {
            number = fallback
        }
        guard range.contains(number) else { throw ConfigError("\(setting): \(number) is outside \(range.lowerBound)…\(range.upperBound)") }
        return number
    }

    /// `postgres.connectionString` (or VERIDOC_POSTGRES), for the commands that
    /// need only the database (stats, report, purge, forget).
    public static func postgresConnectionString(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> String {
        if let value = environment["VERIDOC_POSTGRES"] { return value }
        guard let value = (try root(of: file)["postgres"] as? [String: Any])?["connectionString"] else { return "" }
        guard let text = value as? String else { throw ConfigError("postgres.connectionString: a string is required") }
        return text
    }

    /// `postgres.preparedStatements` (or VERIDOC_PG_PREPARED), default true:
    /// whether connections run recurring statements as named prepared
    /// statements. False behind PgBouncer in transaction mode, which runs each
    /// transaction on another server session, where the statement is missing.
    public static func postgresPreparedStatements(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> Bool {
        let root = environment["VERIDOC_PG_PREPARED"] == nil ? try root(of: file) : [:]
        return try postgresPreparedStatements(root: root, environment: environment)
    }

    public static func postgresPreparedStatements(root: [String: Any], environment: [String: String]) throws(ConfigError) -> Bool {
        if let text = environment["VERIDOC_PG_PREPARED"] {
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: throw ConfigError("VERIDOC_PG_PREPARED: true or false is required")
            }
        }
        guard let value = (root["postgres"] as? [String: Any])?["preparedStatements"] else { return true }
        // JSONSerialization gives booleans as NSNumbers of type "c"; a number is not a boolean here.
        guard let flag = value as? NSNumber, String(cString: flag.objCType) == "c" else {
            throw ConfigError("postgres.preparedStatements: true or false is required")
        }
        return flag.boolValue
    }

    private static func root(of file: URL) throws(ConfigError) -> [String: Any] {
        guard let data = try? Data(contentsOf: file), let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigError("cannot read config file \(file.path) as a JSON object")
        }
        return root
    }
}
