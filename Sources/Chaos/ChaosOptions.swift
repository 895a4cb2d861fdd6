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
    /// The `veridoc` binary to run as workers and broker.
    public var binary: URL
    /// The folder holding `scripts/test-postgres`.
    public var repository: URL
    /// Where the summary JSON goes (nil: nowhere).
    public var output: URL?
    /// Keep the work folder (logs, PostgreSQL data) afterwards.
    public var keep = false
    /// Seconds allowed, once faults stop, for everything to be stored and published.
    public var convergeTimeout: TimeInterval = 180

    public init(binary: URL, repository: URL) {
        self.binary = binary
        self.repository = repository
    }

    var eventCount: Int { events ?? max(50, Int(duration * 20)) }
    var faultCount: Int { faults ?? max(4, Int(duration / 4)) }
}

/// The kinds of fault the harness injects.
public enum FaultKind: String, CaseIterable, Sendable, Codable {
    case workerKill            // SIGKILL a worker at a random moment, start a replacement
    case workerRestart         // SIGTERM (drain, must exit 0), start a replacement: a rolling restart step
    case workerJoin            // one more worker: a rebalance
    case workerLeave           // SIGTERM one worker for good (at least one stays)
    case brokerDown            // `down N` for a few seconds, then `up N`
    case produceErrors         // `errors 0 …` retriable Produce errors
    case fetchErrors           // `errors 1 …` retriable Fetch errors
    case commitErrors          // `errors 8 …` OffsetCommit errors
    case postgresRestart       // fast stop, a few seconds down, start on the same port
    case postgresTerminate     // pg_terminate_backend of every veridoc-worker connection
    case postgresSlow          // ACCESS EXCLUSIVE lock on results held for seconds
}
