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
        threads = try environment.integer("VERIDOC_WORKERS", over: "threads", in: &section, range: 1...256)
        batchSize = try environment.integer("VERIDOC_BATCH_SIZE", over: "batchSize", in: &section, range: 1...2_000) ?? batchSize
        batchLingerMilliseconds = try environment.integer("VERIDOC_BATCH_LINGER_MS", over: "batchLingerMilliseconds", in: &section, range: 0...10_000) ?? batchLingerMilliseconds
        drainTimeoutSeconds = try environment.integer("VERIDOC_DRAIN_TIMEOUT_SECONDS", over: "drainTimeoutSeconds", in: &section, range: 1...3600) ?? drainTimeoutSeconds
        maxEventBytes = try environment.integer("VERIDOC_MAX_EVENT_BYTES", over: "maxEventBytes", in: &section, range: 1024...(64 << 20)) ?? maxEventBytes
        outboxClaimSeconds = try environment.integer("VERIDOC_OUTBOX_CLAIM_SECONDS", over: "outboxClaimSeconds", in: &section, range: 1...3600) ?? outboxClaimSeconds
        signatureMemoEntries = try environment.integer("VERIDOC_SIGNATURE_MEMO_ENTRIES", over: "signatureMemoEntries", in: &section, range: 0...1_048_576) ?? signatureMemoEntries
        try section?.finish()
    }
}
