/// The `worker` section.
public struct WorkerSettings: Sendable, Equatable {
    /// Pool threads (`VERIDOC_WORKERS`); nil: one per core.
    public var threads: Int?
    public var batchSize = 500
    /// How long the persister waits for a batch to fill; 0 writes what is queued at once.
    public var batchLingerMilliseconds = 3
    public var drainTimeoutSeconds = 20
    public var maxEventBytes = 1 << 20
    /// How long a worker's claim on an outbox row keeps others from republishing it.
    public var outboxClaimSeconds = 15
    /// Issuer signatures remembered as verified, so a credential shown again
    /// skips its ECDSA (about 80 bytes each); 0 remembers none.
    public var signatureMemoEntries = 65_536

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        let threadsFromEnvironment = try environment.integer("VERIDOC_WORKERS", range: 1...256)
        let threadsFromFile = try section?.integer("threads", range: 1...256)
        threads = threadsFromEnvironment ?? threadsFromFile
        let batchSizeFromEnvironment = try environment.integer("VERIDOC_BATCH_SIZE", range: 1...2_000)
        let batchSizeFromFile = try section?.integer("batchSize", range: 1...2_000)
        batchSize = batchSizeFromEnvironment ?? batchSizeFromFile ?? batchSize
        let batchLingerMillisecondsFromEnvironment = try environment.integer("VERIDOC_BATCH_LINGER_MS", range: 0...10_000)
        let batchLingerMillisecondsFromFile = try section?.integer("batchLingerMilliseconds", range: 0...10_000)
        batchLingerMilliseconds = batchLingerMillisecondsFromEnvironment ?? batchLingerMillisecondsFromFile ?? batchLingerMilliseconds
        let drainTimeoutSecondsFromEnvironment = try environment.integer("VERIDOC_DRAIN_TIMEOUT_SECONDS", range: 1...3600)
        let drainTimeoutSecondsFromFile = try section?.integer("drainTimeoutSeconds", range: 1...3600)
        drainTimeoutSeconds = drainTimeoutSecondsFromEnvironment ?? drainTimeoutSecondsFromFile ?? drainTimeoutSeconds
        let maxEventBytesFromEnvironment = try environment.integer("VERIDOC_MAX_EVENT_BYTES", range: 1024...(64 << 20))
        let maxEventBytesFromFile = try section?.integer("maxEventBytes", range: 1024...(64 << 20))
        maxEventBytes = maxEventBytesFromEnvironment ?? maxEventBytesFromFile ?? maxEventBytes
        let outboxClaimSecondsFromEnvironment = try environment.integer("VERIDOC_OUTBOX_CLAIM_SECONDS", range: 1...3600)
        let outboxClaimSecondsFromFile = try section?.integer("outboxClaimSeconds", range: 1...3600)
        outboxClaimSeconds = outboxClaimSecondsFromEnvironment ?? outboxClaimSecondsFromFile ?? outboxClaimSeconds
        let signatureMemoEntriesFromEnvironment = try environment.integer("VERIDOC_SIGNATURE_MEMO_ENTRIES", range: 0...1_048_576)
        let signatureMemoEntriesFromFile = try section?.integer("signatureMemoEntries", range: 0...1_048_576)
        signatureMemoEntries = signatureMemoEntriesFromEnvironment ?? signatureMemoEntriesFromFile ?? signatureMemoEntries
        try section?.finish()
    }
}
