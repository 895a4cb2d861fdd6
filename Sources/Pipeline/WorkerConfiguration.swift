import Crypto
import Deployment
import Foundation
import Observability
import Postgres
import Retention
import Revocation
import Settings
import Verification
import Webhooks

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
    /// (`worker.batchLingerMilliseconds`, default 3). 0 writes what is queued
    /// at once: batches still grow with load, since everything that finishes
    /// during one write makes the next batch.
    public var batchLinger: TimeInterval
    public var drainTimeout: TimeInterval
    public var maxEventBytes: Int
    /// HMAC key for storing nonces as keyed hashes; shared by all workers of a deployment.
    public var nonceKey: [UInt8]
    /// How long a worker's claim on an outbox row keeps others from republishing it.
    public var outboxClaim: TimeInterval
    /// `worker.signatureMemoEntries`: issuer signatures remembered as verified (0: none).
    public var signatureMemoEntries = VerifiedSignatureMemo.defaultCapacity
    /// `observability.port` (VERIDOC_HTTP_PORT): where /metrics, /healthz and
    /// /readyz are served, on all IPv4 addresses. 0 picks a free port (logged
    /// as `observability listening`). Default 9464.
    public var httpPort: Int = 9464
    /// The rest of `observability`: that listener's connection limits and deadlines.
    public var observability = ObservabilitySettings()
    /// `observability.logLevel` (VERIDOC_LOG_LEVEL): debug, info, warning or error. Default info.
    public var logLevel: Logger.Level = .info
    /// The `retention` section: data keys for stored values, purge pace.
    public var retention = RetentionConfiguration(keys: nil)
    /// How the status service fetches and keeps revocation lists.
    public var statusLists = StatusService.Configuration(StatusListSettings(), caFile: nil)
    /// How often retained accepted results' lists are read again.
    public var statusRecheckInterval: TimeInterval = 300
    /// The tenants' webhook endpoints: deliveries recorded with each outcome, sent by the worker's dispatcher.
    public var webhooks = WebhookDirectory.none

    /// A connection to `postgres` with these settings.
    public func connectPostgres(applicationName: String) throws(PostgresError) -> PostgresConnection {
        try PostgresConnection(connectionString: postgres, applicationName: applicationName, preparedStatements: postgresPreparedStatements)
    }

    /// The request consumer's librdkafka properties: `kafkaProperties` (which
    /// win) over the worker's defaults, with the bootstrap servers and group.
    ///
    /// The prefetch is bounded in bytes, `prefetchKilobytesPerThread` a pool
    /// thread. librdkafka fetches for a queue that reached its bound again only
    /// after `fetch.queue.backoff.ms` (a second by default), so the prefetch
    /// and the pool's admitted jobs (`Worker.admittedPerThread`) together hold
    /// about a second of what the pool verifies. librdkafka sizes each fetch
    /// response (`fetch.max.bytes`) to the bound unless that is set too.
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
    /// so they batch by themselves; librdkafka's 5 ms default would only delay
    /// each outcome.
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

    /// Enough prefetched input to keep one pool thread busy for most of the
    /// second librdkafka waits before it fetches again for a full queue, on
    /// top of what the thread's admitted jobs already hold. It is also what a
    /// worker's memory peak mostly depends on, so it grows with threads, not
    /// with a guess; a faster pool or larger events need more.
    public static let prefetchKilobytesPerThread = 8192

    /// The worker's settings of a file alone, its tenants not loaded: for
    /// tests of the worker's sections. Commands start from a `Deployment`.
    public static func load(from file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> WorkerConfiguration {
        let settings = try VeridocSettings.load(from: file, environment: environment)
        return try load(settings, replayKey: ReplayKey.load(settings), retention: RetentionConfiguration.load(settings))
    }

    /// The worker's part of the deployment, which has read every file it needs.
    public static func load(_ deployment: Deployment) throws(ConfigError) -> WorkerConfiguration {
        var configuration = try load(deployment.settings, replayKey: deployment.requiredReplayKey(), retention: deployment.retention)
        configuration.statusLists = deployment.statusLists
        configuration.webhooks = deployment.webhooks
        return configuration
    }

    private static func load(_ settings: VeridocSettings, replayKey: [UInt8], retention: RetentionConfiguration) throws(ConfigError) -> WorkerConfiguration {
        let kafka = settings.kafka
        let worker = settings.worker
        guard let bootstrapServers = kafka.bootstrapServers else {
            throw ConfigError("kafka.bootstrapServers: required (or set VERIDOC_KAFKA_BOOTSTRAP_SERVERS)")
        }
        var configuration = WorkerConfiguration(
            bootstrapServers: bootstrapServers, groupID: kafka.groupID, requestTopic: kafka.requestTopic, outcomeTopic: kafka.outcomeTopic,
            deadLetterTopic: kafka.deadLetterTopic, kafkaProperties: kafka.properties, postgres: settings.postgres.connectionString,
            workers: worker.threads ?? ProcessInfo.processInfo.activeProcessorCount, batchSize: worker.batchSize,
            batchLinger: Double(worker.batchLingerMilliseconds) / 1000, drainTimeout: Double(worker.drainTimeoutSeconds),
            maxEventBytes: worker.maxEventBytes, nonceKey: [], outboxClaim: Double(worker.outboxClaimSeconds))

        configuration.offsetGapPolicy = switch kafka.offsetGapPolicy {
        case .skip: .skip
        case .stop: .stop
        }
        configuration.postgresPreparedStatements = settings.postgres.preparedStatements
        configuration.signatureMemoEntries = worker.signatureMemoEntries
        configuration.httpPort = settings.observability.port
        configuration.observability = settings.observability
        configuration.logLevel = Logger.Level(settings.observability.logLevel)

        configuration.nonceKey = replayKey
        configuration.retention = retention
        configuration.statusLists = StatusService.Configuration(settings.statusLists, caFile: settings.statusLists.http.caFile.map { settings.resolve($0).path })
        configuration.statusRecheckInterval = TimeInterval(settings.statusLists.recheckIntervalSeconds)
        return configuration
    }
}

extension Logger.Level {
    /// The level `observability.logLevel` names.
    public init(_ level: ObservabilitySettings.LogLevel) {
        switch level {
        case .debug: self = .debug
        case .info: self = .info
        case .warning: self = .warning
        case .error: self = .error
        }
    }
}
