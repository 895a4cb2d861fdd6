import Foundation

/// What a chaos run did and found; printed and written as JSON.
public struct ChaosSummary: Codable, Sendable {
    public var seed: UInt64 = 0
    public var durationSeconds: Double = 0
    public var records = 0              // records produced (incl. redeliveries and poison)
    public var distinctEventIDs = 0
    public var poisonRecords = 0
    public var results = 0
    public var verified = 0
    public var rejected = 0
    public var deadLetters = 0
    public var outcomeEvents = 0
    public var workersStarted = 0
    public var faults: [String: Int] = [:]
    public var faultsTotal: Int { faults.values.reduce(0, +) }
    public var convergedAfterSeconds: Double?
    /// Invariant name → violations found.
    public var invariants: [String: Int] = [:]
    public var violations: Int { invariants.values.reduce(0, +) }
    /// A few examples per violated invariant, for people.
    public var examples: [String] = []
    public var positionSnapshotsChecked = 0
    public var workDirectory: String?
    /// What the run's own parts did unasked (a broker or PostgreSQL that died,
    /// what the harness did about it), each with its log excerpt. A worker that
    /// dies unasked is a violation (`workerCrashed`) as well.
    public var incidents: [String] = []
    public var brokerRestarts = 0
    public var postgresRestarts = 0
    /// Results stored before the last broker restart: their outcome events
    /// went to the broker that was lost, so `outcomePublished` cannot see them.
    public var outcomesLostWithBroker = 0
    /// Gaps the workers recorded (`consumer_gaps`): records the broker deleted
    /// or lost before they were read. Reported apart from events a worker lost.
    public var offsetGaps: [String] = []
    /// The schedule: with broker restarts (`restarts`) or without (`none`).
    public var brokerRestartSchedule = "restarts"
    /// What the webhook receiver saw: every request, the distinct webhook ids
    /// it acknowledged (2xx), and those it acknowledged more than once (the
    /// at-least-once duplicates, each under its one id).
    public var webhookRequests = 0
    public var webhooksAcknowledged = 0
    public var webhookDuplicates = 0

    enum CodingKeys: String, CodingKey {
        case seed, durationSeconds, records, distinctEventIDs, poisonRecords, results, verified, rejected, deadLetters
        case outcomeEvents, workersStarted, faults, faultsTotal, convergedAfterSeconds, invariants, violations, examples
        case positionSnapshotsChecked, workDirectory, incidents, brokerRestarts, postgresRestarts, outcomesLostWithBroker, offsetGaps
        case brokerRestartSchedule, webhookRequests, webhooksAcknowledged, webhookDuplicates
    }

    public init() {}

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seed = try c.decode(UInt64.self, forKey: .seed)
        durationSeconds = try c.decode(Double.self, forKey: .durationSeconds)
        records = try c.decode(Int.self, forKey: .records)
        distinctEventIDs = try c.decode(Int.self, forKey: .distinctEventIDs)
        poisonRecords = try c.decode(Int.self, forKey: .poisonRecords)
        results = try c.decode(Int.self, forKey: .results)
        verified = try c.decode(Int.self, forKey: .verified)
        rejected = try c.decode(Int.self, forKey: .rejected)
        deadLetters = try c.decode(Int.self, forKey: .deadLetters)
        outcomeEvents = try c.decode(Int.self, forKey: .outcomeEvents)
        workersStarted = try c.decode(Int.self, forKey: .workersStarted)
        faults = try c.decode([String: Int].self, forKey: .faults)
        convergedAfterSeconds = try c.decodeIfPresent(Double.self, forKey: .convergedAfterSeconds)
        invariants = try c.decode([String: Int].self, forKey: .invariants)
        examples = try c.decode([String].self, forKey: .examples)
        positionSnapshotsChecked = try c.decode(Int.self, forKey: .positionSnapshotsChecked)
        workDirectory = try c.decodeIfPresent(String.self, forKey: .workDirectory)
        incidents = try c.decodeIfPresent([String].self, forKey: .incidents) ?? []
        brokerRestarts = try c.decodeIfPresent(Int.self, forKey: .brokerRestarts) ?? 0
        postgresRestarts = try c.decodeIfPresent(Int.self, forKey: .postgresRestarts) ?? 0
        outcomesLostWithBroker = try c.decodeIfPresent(Int.self, forKey: .outcomesLostWithBroker) ?? 0
        offsetGaps = try c.decodeIfPresent([String].self, forKey: .offsetGaps) ?? []
        brokerRestartSchedule = try c.decodeIfPresent(String.self, forKey: .brokerRestartSchedule) ?? "restarts"
        webhookRequests = try c.decodeIfPresent(Int.self, forKey: .webhookRequests) ?? 0
        webhooksAcknowledged = try c.decodeIfPresent(Int.self, forKey: .webhooksAcknowledged) ?? 0
        webhookDuplicates = try c.decodeIfPresent(Int.self, forKey: .webhookDuplicates) ?? 0
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(seed, forKey: .seed)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(records, forKey: .records)
        try c.encode(distinctEventIDs, forKey: .distinctEventIDs)
        try c.encode(poisonRecords, forKey: .poisonRecords)
        try c.encode(results, forKey: .results)
        try c.encode(verified, forKey: .verified)
        try c.encode(rejected, forKey: .rejected)
        try c.encode(deadLetters, forKey: .deadLetters)
        try c.encode(outcomeEvents, forKey: .outcomeEvents)
        try c.encode(workersStarted, forKey: .workersStarted)
        try c.encode(faults, forKey: .faults)
        try c.encode(faultsTotal, forKey: .faultsTotal)
        try c.encodeIfPresent(convergedAfterSeconds, forKey: .convergedAfterSeconds)
        try c.encode(invariants, forKey: .invariants)
        try c.encode(violations, forKey: .violations)
        try c.encode(examples, forKey: .examples)
        try c.encode(positionSnapshotsChecked, forKey: .positionSnapshotsChecked)
        try c.encodeIfPresent(workDirectory, forKey: .workDirectory)
        try c.encode(incidents, forKey: .incidents)
        try c.encode(brokerRestarts, forKey: .brokerRestarts)
        try c.encode(postgresRestarts, forKey: .postgresRestarts)
        try c.encode(outcomesLostWithBroker, forKey: .outcomesLostWithBroker)
        try c.encode(offsetGaps, forKey: .offsetGaps)
        try c.encode(brokerRestartSchedule, forKey: .brokerRestartSchedule)
        try c.encode(webhookRequests, forKey: .webhookRequests)
        try c.encode(webhooksAcknowledged, forKey: .webhooksAcknowledged)
        try c.encode(webhookDuplicates, forKey: .webhookDuplicates)
    }

    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    public var text: String {
        var lines = [
            "Chaos run (seed \(seed), \(Int(durationSeconds)) s of faults)",
            "  records produced:   \(records) (\(distinctEventIDs) event ids, \(poisonRecords) poison)",
            "  results stored:     \(results) (verified \(verified), rejected \(rejected)); dead letters \(deadLetters); outcome events \(outcomeEvents)",
            "  webhooks:           \(webhookRequests) requests, \(webhooksAcknowledged) ids acknowledged, \(webhookDuplicates) acknowledged again (same id)",
            "  workers started:    \(workersStarted)",
            "  broker restarts:    \(brokerRestarts) (schedule: \(brokerRestartSchedule))",
            "  converged after:    \(convergedAfterSeconds.map { String(format: "%.1f s", $0) } ?? "NOT CONVERGED")",
            "  faults injected:    \(faultsTotal)",
        ]
        for (kind, count) in faults.sorted(by: { $0.key < $1.key }) { lines.append("    \(kind): \(count)") }
        lines.append("  invariants (\(positionSnapshotsChecked) position snapshots checked during the run):")
        for (name, count) in invariants.sorted(by: { $0.key < $1.key }) { lines.append("    \(count == 0 ? "✓" : "✗") \(name): \(count) violations") }
        lines.append("  invariant violations: \(violations)")
        for example in examples.prefix(20) { lines.append("    e.g. \(example)") }
        lines.append("  broker restarts \(brokerRestarts), PostgreSQL restarts \(postgresRestarts)"
                     + (outcomesLostWithBroker > 0 ? "; \(outcomesLostWithBroker) outcome events lost with a broker" : ""))
        lines.append("  offset gaps (records the broker no longer had): \(offsetGaps.count)")
        for gap in offsetGaps.prefix(10) { lines.append("    \(gap)") }
        if !incidents.isEmpty { lines.append("  incidents:") }
        for incident in incidents.prefix(20) { lines.append("    \(incident)") }
        return lines.joined(separator: "\n")
    }
}
