import Foundation

/// What a chaos run does: how long faults are injected, how many events are
/// produced meanwhile, how many faults, from which seed.
public struct ChaosOptions: Sendable {
    /// Seconds of fault injection (events are produced during the first ~70 %).
    public var duration: TimeInterval = 120
    /// Records to produce; nil = 20 per second of duration.
    public var events: Int?
    /// Faults to inject; nil = one every 4 seconds.
    public var faults: Int?
    public var seed: UInt64 = 1
    /// Worker processes at the start (joins and leaves vary it between 1 and workers + 2).
    public var workers = 3
    /// The `veridoc` binary, run as the workers.
    public var worker: URL
    /// The `veridoc-dev` binary, run as the mock broker.
    public var tooling: URL
    /// The folder holding `scripts/test-postgres`.
    public var repository: URL
    /// Where the summary JSON goes (nil: nowhere).
    public var output: URL?
    /// Keep the work folder (logs, PostgreSQL data) afterwards.
    public var keep = false
    /// The broker: the mock cluster (default) or tansu.
    public var broker = BrokerKind.mock
    /// Seconds allowed, once faults stop, for everything to be stored and published.
    public var convergeTimeout: TimeInterval = 180
    /// Whether long runs restart the broker. Both brokers here keep topics in
    /// memory, so a restart loses every outcome event on them; the schedule
    /// without restarts is the one in which every outcome event must arrive.
    public var brokerRestarts = true

    public init(worker: URL, tooling: URL, repository: URL) {
        self.worker = worker
        self.tooling = tooling
        self.repository = repository
    }

    var eventCount: Int { events ?? max(50, Int(duration * 20)) }

    /// Broker restarts in a run: each one loses the broker's every record and
    /// makes the producer send everything again, so a few per long run (one per
    /// 150 faults), none in a short one.
    var brokerRestartCount: Int { brokerRestarts ? faultCount / 150 : 0 }
    var faultCount: Int { faults ?? max(4, Int(duration / 4)) }
}

/// The kinds of fault the harness injects.
public enum FaultKind: String, CaseIterable, Sendable, Codable {
    case workerKill            // SIGKILL a worker at a random moment, start a replacement
    case workerRestart         // SIGTERM (drain, must exit 0), start a replacement: a rolling restart step
    case workerJoin            // one more worker: a rebalance
    case workerLeave           // SIGTERM one worker for good (at least one stays)
    case brokerDown            // mock: `down N` for a few seconds, then `up N`; tansu: SIGSTOP, then SIGCONT
    case brokerRestart         // SIGKILL the broker process and start a new one: a memory-only broker loses every topic
    case produceErrors         // `errors 0 …` retriable Produce errors (mock only)
    case fetchErrors           // `errors 1 …` retriable Fetch errors (mock only)
    case commitErrors          // `errors 8 …` OffsetCommit errors (mock only)
    case postgresRestart       // fast stop, a few seconds down, start on the same port
    case postgresTerminate     // pg_terminate_backend of every veridoc-worker connection
    case postgresSlow          // ACCESS EXCLUSIVE lock on results held for seconds
    case receiverDown          // SIGKILL the webhook receiver, a few seconds down, start it on the same port
    case receiverSlow          // its next answers come after the worker's webhooks.timeoutSeconds
    case receiverErrors        // 500 twice, then 200
    case receiverThrottled     // 429 with Retry-After
    case receiverGone          // 410: the endpoint waits until `veridoc webhooks enable`
    case receiverRedirect      // 302 and 307: failures, never followed
    case receiverHuge          // 200 with an 8 MiB body, read no further than webhooks.maxResponseBytes
    case workerKillDuringDelivery // SIGKILL every worker while the receiver holds a delivery unanswered
    case webhookSecretRotation // a second secret and a rolling restart, then the first removed and another
}
