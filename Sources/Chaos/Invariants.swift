import Crypto
import Foundation
import Kafka
import Postgres
import Synchronization
import Verification

/// The invariants a run declares and what violated them: a count per name
/// (zero once declared) and a few examples per name, for the summary. Every
/// part of the run reports here.
final class InvariantLedger: Sendable {
    private let state = Mutex<(counts: [String: Int], examples: [String])>(([:], []))

    func violation(_ invariant: String, _ example: String) {
        state.withLock { state in
            state.counts[invariant, default: 0] += 1
            if state.examples.filter({ $0.hasPrefix(invariant) }).count < 5 { state.examples.append("\(invariant): \(example)") }
        }
    }

    func declare(_ invariant: String) {
        state.withLock { state in
            if state.counts[invariant] == nil { state.counts[invariant] = 0 }
        }
    }

    /// Invariant name → violations found.
    var counts: [String: Int] { state.withLock { $0.counts } }
    var examples: [String] { state.withLock { $0.examples } }
}

/// What the database and the topics must show: sampled while the run goes on,
/// waited for once the faults stop (convergence), checked in full at the end.
/// Violations go to the ledger.
final class InvariantChecks: @unchecked Sendable {
    private let options: ChaosOptions
    private let invariants: InvariantLedger
    private let traffic: Traffic
    private let supervisor: Supervisor
    private let deadLetters: TopicWatch
    private let outcomes: TopicWatch
    private let log: @Sendable (String) -> Void
    private var planned: [Traffic.Planned] { traffic.planned }
    private var delivery: DeliveryLedger { traffic.delivery }
    private let lock = NSLock()
    private var snapshots = 0

    init(options: ChaosOptions, invariants: InvariantLedger, traffic: Traffic, supervisor: Supervisor, deadLetters: TopicWatch, outcomes: TopicWatch,
         log: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.invariants = invariants
        self.traffic = traffic
        self.supervisor = supervisor
        self.deadLetters = deadLetters
        self.outcomes = outcomes
        self.log = log
    }

    /// Position snapshots `sample` checked.
    var snapshotsChecked: Int { lock.lock(); defer { lock.unlock() }; return snapshots }

    private func violation(_ invariant: String, _ example: String) { invariants.violation(invariant, example) }
    private func declare(_ invariant: String) { invariants.declare(invariant) }
    private func connect() throws -> PostgresConnection { try supervisor.connect() }

    /// During the run, about once a second: in one snapshot (a single
    /// statement), every stored position must lie past finished work only —
    /// no offset below it whose event (known from delivery reports) lacks a result.
    func sample(stop: Flag) {
        declare("positionPassedUnfinished")
        var connection: PostgresConnection?
        while !stop.isSet {
            Thread.sleep(forTimeInterval: 1)
            let epoch = delivery.epoch
            do {
                if connection == nil || connection?.isConnected == false {
                    connection?.close()
                    connection = try connect()
                }
                let rows = try connection!.execute(
                    """
                    SELECT partition, next_offset, NULL AS event_id FROM consumer_positions WHERE consumer_group = $1 AND topic = $2
                    UNION ALL SELECT NULL, NULL, event_id FROM results
                    """, [.text(ChaosKafka.group), .text(ChaosKafka.requestTopic)])
                var positions: [Int32: Int64] = [:]
                var stored = Set<String>()
                for row in 0..<rows.rowCount {
                    if let id = rows.string(row, "event_id") { stored.insert(id) } else if let partition = rows.int(row, "partition"), let offset = rows.int(row, "next_offset") {
                        positions[Int32(partition)] = offset
                    }
                }
                // Records the current broker deleted unread, as the workers recorded them, are passed on purpose.
                let gaps = try offsetGaps(connection!)
                delivery.storedPositions = positions
                let map = delivery.offsetMap()
                // A broker replaced meanwhile: positions and offsets of two different logs.
                guard delivery.epoch == epoch else { continue }
                for (partition, position) in positions {
                    for (offset, index) in map[partition] ?? [:] where offset < position {
                        guard let id = planned[index].record.id else { continue }  // dead letters: checked at the end
                        if !stored.contains(id) && !gaps.contains(where: { $0.contains((partition, offset)) }) {
                            violation("positionPassedUnfinished", "partition \(partition) position \(position) passed offset \(offset) (event \(id)) without a result")
                        }
                    }
                }
                lock.lock()
                snapshots += 1
                lock.unlock()
            } catch {
                // PostgreSQL down or tables not there yet: nothing to sample.
                connection?.close()
                connection = nil
            }
        }
        connection?.close()
    }

    /// Seconds after the faults until every event is stored, every position at
    /// the end of its partition and the outbox empty; nil if that never happened.
    func waitForConvergence() -> Double? {
        let started = Date()
        let deadline = started.addingTimeInterval(options.convergeTimeout + options.duration * 0.3)
        while Date() < deadline {
            if traffic.productionComplete, let state = try? databaseState(), state.webhooksSettled,
               state.converged(with: delivery.highWatermarks(), ids: traffic.distinctIDs().subtracting(idsLostInGaps(state.resultIDs))) {
                return Date().timeIntervalSince(started)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let state = try? databaseState()
        log("not converged: delivered \(delivery.deliveredCount(of: planned.count))/\(planned.count), results \(state?.results ?? -1)/\(traffic.distinctIDs().count), unpublished \(state?.unpublished ?? -1), webhooks settled \(state?.webhooksSettled ?? false)")
        return nil
    }

    /// Event ids without a result whose record lies in a gap the workers
    /// recorded against the current broker: the broker deleted it unread, and
    /// the workers said so (the invariants count these apart).
    func idsLostInGaps(_ stored: Set<String>) -> Set<String> {
        guard let connection = try? connect() else { return [] }
        defer { connection.close() }
        guard let gaps = try? offsetGaps(connection), !gaps.isEmpty else { return [] }
        var lost = Set<String>()
        for index in planned.indices {
            guard let id = planned[index].record.id, !stored.contains(id), let place = delivery.place(of: index),
                  gaps.contains(where: { $0.contains(place) }) else { continue }
            lost.insert(id)
        }
        return lost
    }

    struct DatabaseState {
        var results = 0
        var resultIDs: Set<String> = []
        var unpublished = 0
        var positions: [Int32: Int64] = [:]
        /// Every webhook delivery delivered.
        var webhooksSettled = false

        func converged(with highWatermarks: [Int32: Int64], ids: Set<String>) -> Bool {
            guard unpublished == 0, ids.isSubset(of: resultIDs) else { return false }
            return highWatermarks.allSatisfy { positions[$0.key] == $0.value }
        }
    }

    func databaseState() throws -> DatabaseState {
        let connection = try connect()
        defer { connection.close() }
        var state = DatabaseState()
        let rows = try connection.execute("SELECT event_id FROM results")
        state.results = rows.rowCount
        state.resultIDs = Set((0..<rows.rowCount).compactMap { rows.string($0, "event_id") })
        state.unpublished = Int(try connection.execute("SELECT count(*) AS count FROM outbox WHERE published_at IS NULL").int(0, "count") ?? -1)
        state.webhooksSettled = WebhookChecks.settled(connection)
        let positions = try connection.execute("SELECT partition, next_offset FROM consumer_positions WHERE consumer_group = $1 AND topic = $2",
                                               [.text(ChaosKafka.group), .text(ChaosKafka.requestTopic)])
        for row in 0..<positions.rowCount {
            if let partition = positions.int(row, "partition"), let offset = positions.int(row, "next_offset") { state.positions[Int32(partition)] = offset }
        }
        return state
    }

    /// The invariants, from the database and the three topics, after convergence.
    func check(into summary: inout ChaosSummary) throws {
        for name in ["exactlyOneResult", "elementsOnce", "verdictMatchesReference", "outcomePublished", "positionPassedUnfinished",
                     "positionNotAtEnd", "deadLetterMissing", "nonceAcceptedTwice", "converged"] { declare(name) }
        if summary.convergedAfterSeconds == nil { violation("converged", "not everything stored and published within the timeout") }

        let connection = try connect()
        defer { connection.close() }
        var stored: [String: (verdict: String, reasons: [String])] = [:]
        let rows = try connection.execute("SELECT event_id, verdict, array_to_string(reason_codes, ',') AS reasons FROM results")
        for row in 0..<rows.rowCount {
            let reasons = rows.string(row, "reasons") ?? ""
            stored[rows.string(row, "event_id")!] = (rows.string(row, "verdict")!, reasons.isEmpty ? [] : reasons.split(separator: ",").map(String.init))
        }
        summary.results = stored.count
        summary.verified = stored.values.filter { $0.verdict == "verified" }.count
        summary.rejected = stored.count - summary.verified

        // Every delivered event id: exactly one result row (the primary key makes "at most" structural).
        let delivered = planned.indices.filter { delivery.wasDelivered($0) }
        let ids = Set(delivered.compactMap { planned[$0].record.id })
        summary.records = delivered.count
        summary.distinctEventIDs = ids.count
        summary.poisonRecords = delivered.filter { planned[$0].record.id == nil }.count
        // Records the broker deleted before a worker read them are the broker's
        // loss, recorded by the workers as gaps: reported apart, not as lost events.
        let gaps = try offsetGaps(connection)
        let everyGap = try offsetGaps(connection, since: .distantPast)
        var inGaps: [String: Int] = [:]
        for index in delivered {
            guard let id = planned[index].record.id, stored[id] == nil, let place = delivery.place(of: index),
                  let gap = gaps.first(where: { $0.contains(place) }) else { continue }
            inGaps[gap.description, default: 0] += 1
        }
        // Every gap is reported; only the current broker's excuse a missing result.
        summary.offsetGaps = everyGap.map { gap in
            gaps.contains { $0.description == gap.description } ? "\(gap.description): \(inGaps[gap.description] ?? 0) events in it" : "\(gap.description): an earlier broker's"
        }
        for index in delivered {
            guard let id = planned[index].record.id, stored[id] == nil else { continue }
            if let place = delivery.place(of: index), gaps.contains(where: { $0.contains(place) }) { continue }
            violation("exactlyOneResult", "event \(id) has no result")
        }
        for id in stored.keys where !ids.contains(id) { violation("exactlyOneResult", "result \(id) for an event never produced") }

        // Each disclosed element once per event, through crashes and redeliveries:
        // since migration 7 no key enforces it, the write path does.
        let repeated = try connection.execute("""
            SELECT event_id, count(*) AS n FROM elements GROUP BY event_id, namespace, element HAVING count(*) > 1 LIMIT 3
            """)
        for row in 0..<repeated.rowCount {
            violation("elementsOnce", "event \(repeated.string(row, "event_id") ?? "?") has an element row \(repeated.int(row, "n") ?? 0) times")
        }

        // Verdict and reasons equal the in-process reference; a replayed nonce may
        // instead be request.nonce_reused when another event of its group owns it.
        // A verified event owns its tenant's nonce (one row) and its presentation,
        // single-use across the deployment (rows under tenant '', one per document).
        let nonceOwners = try connection.execute("SELECT event_id FROM nonces WHERE tenant <> ''")
        let owners = Set((0..<nonceOwners.rowCount).compactMap { nonceOwners.string($0, "event_id") })
        if owners.count != nonceOwners.rowCount { violation("nonceAcceptedTwice", "an event owns more than one nonce row") }
        let presentationOwners = try connection.execute("SELECT DISTINCT event_id FROM nonces WHERE tenant = ''")
        let presented = Set((0..<presentationOwners.rowCount).compactMap { presentationOwners.string($0, "event_id") })
        var verifiedPerGroup: [String: [String]] = [:]
        var seen = Set<String>()
        for index in delivered {
            let plan = planned[index]
            guard let id = plan.record.id, let expected = plan.expected, let actual = stored[id], seen.insert(id).inserted else { continue }
            if actual.verdict == "verified" {
                verifiedPerGroup[plan.nonceGroup ?? id, default: []].append(id)
                if !owners.contains(id) { violation("nonceAcceptedTwice", "verified event \(id) does not own its nonce") }
                if !presented.contains(id) { violation("nonceAcceptedTwice", "verified event \(id) does not own its presentation") }
            }
            if actual.verdict == expected.verdict && actual.reasons == expected.reasons { continue }
            if expected.verdict == "verified" && actual.verdict == "rejected" && actual.reasons == ["request.nonce_reused"] && !owners.contains(id) {
                continue
            }
            violation("verdictMatchesReference", "event \(id) (\(plan.record.kind.rawValue)): stored \(actual.verdict) \(actual.reasons), reference \(expected.verdict) \(expected.reasons)")
        }
        for (group, verified) in verifiedPerGroup where verified.count > 1 {
            violation("nonceAcceptedTwice", "nonce of \(group) accepted for \(verified.count) events: \(verified.prefix(3).joined(separator: ", "))")
        }

        // Every result: an outcome event with its deterministic id; except those
        // stored before the broker was last replaced, whose outcome events went
        // to the broker that was lost.
        var checked = Set(stored.keys)
        if let restarted = supervisor.lastBrokerRestart {
            let before = try connection.execute("SELECT event_id FROM results WHERE verified_at < $1", [.timestamp(restarted)])
            for row in 0..<before.rowCount { if let id = before.string(row, "event_id") { checked.remove(id) } }
            summary.outcomesLostWithBroker = stored.count - checked.count
        }
        let wanted = Set(checked.map { OutcomeEvent.id(forRequest: $0) })
        // What the watcher read during the run (the broker may have deleted the oldest since), and the topic now.
        var outcomeDigests = outcomes.records
        var outcomeIDs = Set(outcomeDigests.keys)
        _ = readTopic(ChaosKafka.outcomeTopic, timeout: 60) { message in
            if let (id, digest) = TopicWatch.outcome(of: message) {
                outcomeIDs.insert(id)
                outcomeDigests[id] = digest
            }
            return wanted.isSubset(of: outcomeIDs)
        }
        try WebhookChecks(receiver: supervisor.webhooks.receiver, invariants: invariants)
            .check(results: Set(stored.keys), outcomeDigests: outcomeDigests, connection: connection, into: &summary)
        summary.outcomeEvents = outcomeIDs.count
        for id in checked where !outcomeIDs.contains(OutcomeEvent.id(forRequest: id)) {
            violation("outcomePublished", "result \(id) has no outcome event \(OutcomeEvent.id(forRequest: id))")
        }

        // The request topic as it is (partition, offset → event id) and the dead letters' origins.
        let expectedRecords = delivered.count
        var requests: [Int32: [Int64: String?]] = [:]  // nil: no event id (a dead letter)
        var readCount = 0
        _ = readTopic(ChaosKafka.requestTopic, timeout: 60) { message in
            let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any]
            let id: String? = object?["id"] as? String
            requests[message.topicPartition.partition, default: [:]].updateValue(id, forKey: message.offset)
            readCount += 1
            return readCount >= expectedRecords
        }
        let poison = requests.values.flatMap { $0.values }.filter { $0 == nil }.count
        // What the watcher read during the run, and what is left on the topic now.
        var deadLettered = Set(deadLetters.records.keys)
        _ = readTopic(ChaosKafka.deadLetterTopic, timeout: poison > 0 ? 30 : 3) { message in
            if let origin = TopicWatch.origin(of: message) { deadLettered.insert(origin) }
            return deadLettered.count >= poison
        }
        summary.deadLetters = deadLettered.count

        // Positions: at the end of each partition now, and never past an offset without a result or dead letter.
        let state = try databaseState()
        for partition in Int32(0)..<6 {
            let offsets = requests[partition] ?? [:]
            let end = (offsets.keys.max() ?? -1) + 1
            let position = state.positions[partition] ?? 0
            if position != end { violation("positionNotAtEnd", "partition \(partition): position \(position), end \(end)") }
            for (offset, id) in offsets where offset < position {
                if let id {
                    if stored[id] == nil { violation("positionPassedUnfinished", "partition \(partition) offset \(offset) (\(id)) has no result") }
                } else if !deadLettered.contains("\(partition)/\(offset)") {
                    violation("deadLetterMissing", "partition \(partition) offset \(offset) has no dead letter")
                }
            }
        }
    }

    struct RecordedGap {
        let partition: Int32
        let range: Range<Int64>
        let kind: String
        let policy: String
        var description: String { "partition \(partition) \(kind) offsets \(range.lowerBound)..<\(range.upperBound) (\(policy))" }

        func contains(_ place: (partition: Int32, offset: Int64)) -> Bool { partition == place.partition && range.contains(place.offset) }
    }

    /// The workers' gap records for the request topic (none before the table
    /// exists) since `since`, by default since the current broker took over: a
    /// replaced broker's offsets start again at 0, so an older gap says
    /// nothing of today's records.
    func offsetGaps(_ connection: PostgresConnection, since: Date? = nil) throws -> [RecordedGap] {
        let rows: PostgresResult
        do {
            rows = try connection.execute("""
                SELECT partition, from_offset, to_offset, kind, policy FROM consumer_gaps
                WHERE consumer_group = $1 AND topic = $2 AND detected_at >= to_timestamp($3::double precision) ORDER BY partition, from_offset
                """, [.text(ChaosKafka.group), .text(ChaosKafka.requestTopic), .text(String((since ?? delivery.epochStarted).timeIntervalSince1970))])
        } catch {
            if error.sqlState == "42P01" { return [] }
            throw error
        }
        return (0..<rows.rowCount).compactMap { row in
            guard let partition = rows.int(row, "partition"), let from = rows.int(row, "from_offset"), let to = rows.int(row, "to_offset"),
                  let kind = rows.string(row, "kind"), let policy = rows.string(row, "policy") else { return nil }
            // A truncation has nothing to exclude: what the old log held is the broker's to have lost.
            return RecordedGap(partition: Int32(partition), range: kind == "deleted" ? from..<max(from, to) : from..<from, kind: kind, policy: policy)
        }
    }

    /// Reads a topic from the beginning with a fresh group until `done` says so,
    /// or nothing new arrived for a few seconds after `timeout`.
    func readTopic(_ topic: String, timeout: TimeInterval, _ handle: (KafkaMessage) -> Bool) -> Bool {
        guard let consumer = topicReader(topic, bootstrap: supervisor.currentBootstrap) else { return false }
        defer { consumer.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let message = try? consumer.poll(timeoutMilliseconds: 200) else { continue }
            if handle(message) { return true }
        }
        return false
    }
}
