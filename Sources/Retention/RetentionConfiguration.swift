import Foundation
import Settings
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
    /// How long the purge leaves a session after it expired.
    public var sessionKeep: TimeInterval

    public init(keys: DataKeyRing?, purgeInterval: TimeInterval = 60, purgeBatchSize: Int = 1_000, sessionKeep: TimeInterval = 3_600) {
        self.sessionKeep = sessionKeep
        self.keys = keys
        self.purgeInterval = purgeInterval
        self.purgeBatchSize = purgeBatchSize
    }

    public static func load(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> RetentionConfiguration {
        try load(VeridocSettings.load(from: file, environment: environment))
    }

    /// Reads the data key files the section names.
    public static func load(_ settings: VeridocSettings) throws(ConfigError) -> RetentionConfiguration {
        let section = settings.retention
        var keys: [String: [UInt8]] = [:]
        for (index, key) in section.dataKeys.enumerated() {
            keys[key.id] = try DataKeyRing.loadKeyFile(settings.resolve(key.file), setting: "retention.dataKeys[\(index)].file")
        }
        var ring: DataKeyRing?
        if let active = section.activeKey, !keys.isEmpty {
            do { ring = try DataKeyRing(keys: keys, activeID: active) } catch { throw ConfigError(error.message) }
        }
        return RetentionConfiguration(keys: ring, purgeInterval: TimeInterval(section.purgeIntervalSeconds), purgeBatchSize: section.purgeBatchSize,
                                      sessionKeep: TimeInterval(section.sessionKeepSeconds))
    }
}
