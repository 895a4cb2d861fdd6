import Foundation
import Observability
import Postgres
import Retention
import Verification

/// The worker's settings: the config file's `kafka`, `postgres`, `worker`,
/// `replay` and `observability` sections, each overridable by a `VERIDOC_…` environment
/// variable. A bad value fails at start with a message naming the setting.
public struct WorkerConfiguration: Sendable {
    public var bootstrapServers: String
    public var groupID: String
    public var requestTopic: String
    public var outcomeTopic: String
    public var deadLetterTopic: String
    /// Passed to librdkafka verbatim (SASL, TLS, tuning).
    public var kafkaProperties: [String: String]
    /// `kafka.offsetGapPolicy` (VERIDOC_KAFKA_OFFSET_GAP_POLICY): what to do
    /// where the broker no longer has a partition's records. Default skip.
    public var offsetGapPolicy: OffsetGapPolicy = .skip
    /// A libpq connection string; PG* environment variables also apply.
    public var postgres: String
    /// `postgres.preparedStatements` (VERIDOC_PG_PREPARED): false sends every
    /// statement unnamed, for PgBouncer in transaction mode. Default true.
    public var postgresPreparedStatements = true
    public var workers: Int
    public var batchSize: Int
    /// How long the persister waits for a batch to fill
    /// (`worker.batchLingerMilliseconds`, default 3; docs/operations.md has the
    /// measurements). 0 writes what is queued at once: batches still grow with
    /// load, since everything that finishes during one write makes the next batch.
    public var batchLinger: TimeInterval
    public var drainTimeout: TimeInterval
    public var maxEventBytes: Int
    /// HMAC key for storing nonces as keyed hashes; shared by all workers of a deployment.
    public var nonceKey: [UInt8]
    /// How long a worker's claim on an outbox row keeps others from republishing it.
    public var outboxClaim: TimeInterval
    /// `observability.port` (VERIDOC_HTTP_PORT): where /metrics, /healthz and
    /// /readyz are served, on all IPv4 addresses. 0 picks a free port (logged
    /// as `observability listening`). Default 9464.
    public var httpPort: Int = 9464
    /// `observability.logLevel` (VERIDOC_LOG_LEVEL): debug, info, warning or error. Default info.
    public var logLevel: Logger.Level = .info
    /// The `retention` section: data keys for stored values, purge pace.
    public var retention = RetentionConfiguration(keys: nil)

    /// A connection to `postgres` with these settings.
    public func connectPostgres(applicationName: String) throws(PostgresError) -> PostgresConnection {
        try PostgresConnection(connectionString: postgres, applicationName: applicationName, preparedStatements: postgresPreparedStatements)
    }

    /// The request consumer's librdkafka properties: `kafkaProperties` (which
    /// win) over the worker's defaults, with the bootstrap servers and group.
    ///
    /// The prefetch is bounded in bytes, `prefetchKilobytesPerThread` a pool
    /// thread. librdkafka 2.0.2 fetches for a queue that reached its bound
    /// again only about a second later (`fetch.queue.backoff.ms`, which makes
    /// that shorter, came in 2.4), so the prefetch and the pool's admitted jobs
    /// (`Worker.admittedPerThread`) together had to hold a second of what the
    /// pool verifies; less starved it (2 MB for 2 threads: 740 → 235 events/s
    /// draining a backlog). A pool faster than that now has the consumer loop
    /// wake the fetcher (`FetcherWake`). librdkafka sizes each fetch response
    /// (`fetch.max.bytes`) to the bound unless that is set too.
    public var consumerProperties: [String: String] {
        var properties = kafkaProperties
        properties["bootstrap.servers"] = bootstrapServers
        properties["group.id"] = groupID
        properties["queued.max.messages.kbytes"] = properties["queued.max.messages.kbytes"] ?? String(Self.prefetchKilobytesPerThread * workers)
        properties["statistics.interval.ms"] = properties["statistics.interval.ms"] ?? "5000"
        return properties
    }

    /// The outcome and dead-letter producer's librdkafka properties:
    /// `kafkaProperties` (which win) over its defaults, without the consumer's.
    ///
    /// `linger.ms` 0: outcomes are handed over a committed batch at a time,
    /// so they batch by themselves; librdkafka's 5 ms default only delayed
    /// each outcome (bench at half of peak: send → delivery report 8 → 3 ms).
    public var producerProperties: [String: String] {
        var properties = kafkaProperties
        properties["bootstrap.servers"] = bootstrapServers
        properties["enable.idempotence"] = properties["enable.idempotence"] ?? "true"
        properties["acks"] = properties["acks"] ?? "all"
        properties["linger.ms"] = properties["linger.ms"] ?? "0"
        // Consumer-only settings in the shared map would make the producer warn.
        for key in Self.consumerOnlyProperties { properties[key] = nil }
        return properties
    }

    static let consumerOnlyProperties = [
        "group.id", "auto.offset.reset", "enable.auto.commit", "partition.assignment.strategy", "session.timeout.ms",
        "fetch.wait.max.ms", "enable.auto.offset.store", "max.poll.interval.ms", "heartbeat.interval.ms",
        "queued.max.messages.kbytes", "queued.min.messages", "fetch.max.bytes", "max.partition.fetch.bytes",
    ]

    /// A pool thread verifies up to ~2,000 events of ~10 KB a second on the
    /// bench machine (20 MB) and its 512 admitted jobs hold ~5 MB, so 8 MB
    /// more covers most of the second. With 4 MB, once the pool had got faster,
    /// a 100k backlog drained at 834 events/s; with 8 MB it drained at 1,080,
    /// peaking at 132 MB. A faster pool, or larger events, need more.
    /// The old fixed 16 MB (a 16 MB fetch response on top of it) was most of the
    /// 160–240 MB a 100k-event backlog drain peaked at.
    public static let prefetchKilobytesPerThread = 8192

    public static func load(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> WorkerConfiguration {
        guard let data = try? Data(contentsOf: file),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw ConfigError("cannot read config file \(file.path) as a JSON object") }
        var reader = SettingReader(root: root, environment: environment)
        let base = file.deletingLastPathComponent()

        var configuration = WorkerConfiguration(
            bootstrapServers: try reader.string("kafka.bootstrapServers", env: "VERIDOC_KAFKA_BOOTSTRAP_SERVERS"),
            groupID: try reader.string("kafka.groupId", env: "VERIDOC_KAFKA_GROUP_ID", default: "veridoc"),
            requestTopic: try reader.string("kafka.requestTopic", env: "VERIDOC_KAFKA_REQUEST_TOPIC", default: "veridoc.requests"),
            outcomeTopic: try reader.string("kafka.outcomeTopic", env: "VERIDOC_KAFKA_OUTCOME_TOPIC", default: "veridoc.outcomes"),
            deadLetterTopic: try reader.string("kafka.deadLetterTopic", env: "VERIDOC_KAFKA_DEAD_LETTER_TOPIC", default: "veridoc.requests.dlq"),
            kafkaProperties: try reader.properties("kafka.properties", envPrefix: "VERIDOC_KAFKA_PROPERTY_"),
            postgres: try reader.string("postgres.connectionString", env: "VERIDOC_POSTGRES", default: ""),
            workers: try reader.integer("worker.threads", env: "VERIDOC_WORKERS", default: ProcessInfo.processInfo.activeProcessorCount, range: 1...256),
            batchSize: try reader.integer("worker.batchSize", env: "VERIDOC_BATCH_SIZE", default: 500, range: 1...2_000),
            batchLinger: Double(try reader.integer("worker.batchLingerMilliseconds", env: "VERIDOC_BATCH_LINGER_MS", default: 3, range: 0...10_000)) / 1000,
            drainTimeout: Double(try reader.integer("worker.drainTimeoutSeconds", env: "VERIDOC_DRAIN_TIMEOUT_SECONDS", default: 20, range: 1...3600)),
            maxEventBytes: try reader.integer("worker.maxEventBytes", env: "VERIDOC_MAX_EVENT_BYTES", default: 1 << 20, range: 1024...(64 << 20)),
            nonceKey: [],
            outboxClaim: Double(try reader.integer("worker.outboxClaimSeconds", env: "VERIDOC_OUTBOX_CLAIM_SECONDS", default: 15, range: 1...3600)))

        let gapPolicy = try reader.string("kafka.offsetGapPolicy", env: "VERIDOC_KAFKA_OFFSET_GAP_POLICY", default: "skip")
        guard let policy = OffsetGapPolicy(rawValue: gapPolicy) else {
            throw ConfigError("kafka.offsetGapPolicy: \(gapPolicy) is not one of \(OffsetGapPolicy.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        configuration.offsetGapPolicy = policy
        configuration.postgresPreparedStatements = try RetentionConfiguration.postgresPreparedStatements(root: root, environment: environment)
        configuration.httpPort = try reader.integer("observability.port", env: "VERIDOC_HTTP_PORT", default: 9464, range: 0...65535)
        let level = try reader.string("observability.logLevel", env: "VERIDOC_LOG_LEVEL", default: "info")
        guard let logLevel = Logger.Level(name: level) else { throw ConfigError("observability.logLevel: \(level) is not one of debug, info, warning, error") }
        configuration.logLevel = logLevel

        let keyFile = try reader.string("replay.nonceKeyFile", env: "VERIDOC_NONCE_KEY_FILE", default: "")
        guard !keyFile.isEmpty else { throw ConfigError("replay.nonceKeyFile: required (a file with at least 32 random bytes, base64 or raw, shared by all workers)") }
        let keyURL = keyFile.hasPrefix("/") ? URL(fileURLWithPath: keyFile) : base.appendingPathComponent(keyFile)
        if let problem = KeyFile.permissionProblem(keyURL) { throw ConfigError("replay.nonceKeyFile: \(problem)") }
        guard let keyData = try? Data(contentsOf: keyURL) else { throw ConfigError("replay.nonceKeyFile: cannot read \(keyURL.path)") }
        // Bytes only (no String holding the key): base64 with surrounding whitespace, or raw.
        var trimmed = Array(keyData)
        while let last = trimmed.last, last == 0x0a || last == 0x0d || last == 0x20 || last == 0x09 { trimmed.removeLast() }
        while let first = trimmed.first, first == 0x0a || first == 0x0d || first == 0x20 || first == 0x09 { trimmed.removeFirst() }
        let key = Data(base64Encoded: Data(trimmed)).map(Array.init) ?? Array(keyData)
        guard key.count >= 32 else { throw ConfigError("replay.nonceKeyFile: \(keyURL.path) holds fewer than 32 key bytes") }
        configuration.nonceKey = key
        configuration.retention = try RetentionConfiguration.load(root: root, base: base, environment: environment)
        return configuration
    }
}

/// Reads dotted settings from the JSON root, an environment variable winning.
private struct SettingReader {
    let root: [String: Any]
    let environment: [String: String]

    func value(_ path: String) -> Any? {
        var current: Any? = root
        for part in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(part)]
        }
        return current
    }

    mutating func string(_ path: String, env: String, default fallback: String? = nil) throws(ConfigError) -> String {
        if let value = environment[env] { return value }
        switch value(path) {
        case let text as String: return text
        case nil:
            guard let fallback else { throw ConfigError("\(path): required (or set \(env))") }
            return fallback
        default: throw ConfigError("\(path): a string is required")
        }
    }

    mutating func integer(_ path: String, env: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let number: Int
        if let text = environment[env] {
            guard let parsed = Int(text) else { throw ConfigError("\(env): a whole number is required") }
            number = parsed
        } else if let raw = value(path) {
            guard let parsed = raw as? NSNumber, String(cString: parsed.objCType) != "c", parsed.doubleValue == parsed.doubleValue.rounded() else {
                throw ConfigError("\(path): a whole number is required")
            }
            number = parsed.intValue
        } else {
            number = fallback
        }
        guard range.contains(number) else { throw ConfigError("\(path): \(number) is outside \(range.lowerBound)…\(range.upperBound)") }
        return number
    }

    func properties(_ path: String, envPrefix: String) throws(ConfigError) -> [String: String] {
        var properties: [String: String] = [:]
        if let raw = value(path) {
            guard let object = raw as? [String: Any] else { throw ConfigError("\(path): an object of librdkafka properties is required") }
            for (key, value) in object {
                switch value {
                case let text as String: properties[key] = text
                case let number as NSNumber: properties[key] = String(cString: number.objCType) == "c" ? (number.boolValue ? "true" : "false") : number.stringValue
                default: throw ConfigError("\(path).\(key): a string, number or boolean is required")
                }
            }
        }
        // VERIDOC_KAFKA_PROPERTY_SASL_USERNAME=… sets sasl.username.
        for (name, value) in environment where name.hasPrefix(envPrefix) {
            properties[name.dropFirst(envPrefix.count).lowercased().replacingOccurrences(of: "_", with: ".")] = value
        }
        return properties
    }
}
