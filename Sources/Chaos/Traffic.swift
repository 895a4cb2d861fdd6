import DemoKit
import Foundation
import Kafka
import TestIssuer
import Verification

/// The producer side of a run: the planned records with their reference
/// verdicts, and the thread that sends them over the first ~70 % of the
/// duration, sends again what failed or what a replaced broker lost, and keeps
/// within the broker's retention. What was delivered where is the delivery
/// ledger's.
final class Traffic: @unchecked Sendable {
    struct Planned {
        let record: LoadGenerator.Record
        let expected: (verdict: String, reasons: [String])?
        /// Replays of one response share a group (the original event id).
        let nonceGroup: String?
    }

    let planned: [Planned]
    let delivery: DeliveryLedger
    private let options: ChaosOptions
    private let invariants: InvariantLedger
    private let bootstrap: @Sendable () -> String

    /// Generates `options.eventCount` records from `factory` and verifies each
    /// in process for its reference verdict.
    init(factory: TestIssuer.EventFactory, options: ChaosOptions, delivery: DeliveryLedger, invariants: InvariantLedger,
         bootstrap: @escaping @Sendable () -> String, log: @Sendable (String) -> Void) throws {
        self.options = options
        self.delivery = delivery
        self.invariants = invariants
        self.bootstrap = bootstrap
        var planned: [Planned] = []
        let verifier = try factory.verifier()
        let mix = LoadGenerator.Mix(weights: [
            (.valid, 70), (.expired, 4), (.stale, 3), (.tampered, 5), (.wrongKey, 3), (.untrusted, 3),
            (.malformed, 4), (.replayed, 4), (.redelivered, 3), (.poison, 1),
        ])
        var generator = LoadGenerator(factory: factory, mix: mix, seed: options.seed &+ 1)
        log("generating \(options.eventCount) records and their reference verdicts")
        for _ in 0..<options.eventCount {
            let record = try generator.next()
            var expected: (String, [String])?
            if record.id != nil {
                let result = verifier.verify(eventJSON: record.value, at: Date())
                expected = (result.verdict, result.report.reasons.map(\.code.rawValue))
            }
            var group: String? = record.id
            if record.kind == .replayed, let id = record.id {
                let parts = id.split(separator: "-", maxSplits: 2)
                if parts.count == 3 { group = String(parts[2]) }
            }
            planned.append(Planned(record: record, expected: expected, nonceGroup: group))
        }
        self.planned = planned
    }

    private func makeProducer() -> KafkaProducer? {
        do {
            return try KafkaProducer(properties: [
                "bootstrap.servers": bootstrap(), "linger.ms": "5", "message.timeout.ms": "60000", "log_level": "2",
                "max.in.flight.requests.per.connection": ChaosKafka.maxInFlight,
            ], onDelivery: { [delivery] report in delivery.report(report) }, onError: { _ in
                // Broker-down connection errors are expected here; delivery reports tell what matters.
            })
        } catch {
            invariants.violation("producer", "cannot create the producer: \(error)")
            return nil
        }
    }

    /// Bytes a partition may hold beyond its stored position before the
    /// producer waits. The mock broker keeps about 5 MB a partition and deletes
    /// older records: a producer that outruns the workers by more makes the
    /// broker lose records, and the run would measure the broker's retention,
    /// not the workers.
    static let backlogBytesPerPartition = 3 << 20

    func produce(stop: Flag) {
        guard var producer = makeProducer() else { return }
        var epoch = delivery.epoch
        let window = max(1, options.duration * 0.7)
        let interval = window / Double(max(planned.count, 1))
        let started = Date()
        var next = 0
        var resend: [Int] = []
        var backlogCheckedAt = Date.distantPast
        var backlogIsFull = false
        while !stop.isSet {
            if delivery.epoch != epoch {
                // The broker was replaced, empty: everything produced so far is sent
                // to the new one (already stored events come back as duplicates).
                producer.close(flushTimeoutMilliseconds: 0)
                guard let fresh = makeProducer() else { return }
                producer = fresh
                epoch = delivery.epoch
                resend = Array(0..<next)
            }
            // Computed at most every 100 ms (it walks every delivery of the epoch),
            // and before every batch of a resend, which sends 200 records at once.
            if !resend.isEmpty || Date().timeIntervalSince(backlogCheckedAt) > 0.1 {
                backlogCheckedAt = Date()
                backlogIsFull = backlogFull()
            }
            if backlogIsFull {
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            // Failed deliveries are sent again (same bytes, same id): duplicates are the worker's job.
            var batch = delivery.takeRetries()
            if !resend.isEmpty {
                batch += resend.prefix(200)
                resend.removeFirst(min(200, resend.count))
            } else if next < planned.count && Date().timeIntervalSince(started) >= Double(next) * interval {
                batch.append(next)
                next += 1
            }
            for index in batch {
                let record = planned[index].record
                let token = delivery.sent(index)
                var attempts = 0
                while !stop.isSet {
                    do {
                        try producer.send(topic: ChaosKafka.requestTopic, key: record.key, value: record.value, token: token)
                        break
                    } catch {
                        attempts += 1
                        if attempts > 6000 { break }
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                }
            }
            if batch.isEmpty { Thread.sleep(forTimeInterval: min(0.01, interval)) }
        }
        producer.close(flushTimeoutMilliseconds: 5_000)
    }

    /// Whether some partition may hold `backlogBytesPerPartition` past its
    /// stored position: what was delivered there, and, since any partition may
    /// get them, everything sent and not yet reported. (Counting only reported
    /// deliveries let a resend after a broker restart push thousands of records
    /// between two checks, and the mock deleted them before they were read.)
    private func backlogFull() -> Bool {
        let positions = delivery.storedPositions
        let size = { (index: Int) in self.planned[index].record.value.count }
        let pending = delivery.pendingBytes(size: size)
        let backlog = delivery.backlogBytes(beyond: positions, size: size)
        return (backlog.values.max() ?? 0) + pending > Self.backlogBytesPerPartition
    }

    var productionComplete: Bool { delivery.deliveredCount(of: planned.count) == planned.count }

    /// The event ids of every record delivered to the current broker.
    func distinctIDs() -> Set<String> {
        Set(planned.indices.filter { delivery.wasDelivered($0) }.compactMap { planned[$0].record.id })
    }
}
