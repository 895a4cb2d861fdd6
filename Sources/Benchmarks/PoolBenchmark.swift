import Dispatch
import DemoKit
import Foundation
import Kafka
import Observability
import Pipeline
import Retention
import Verification

/// The worker's pool stage alone, for `make bench`: the real
/// `VerificationPool` running the real per-record work (read the event,
/// verify, prepare the write), fed from one thread as the consumer feeds it,
/// with no Kafka and no PostgreSQL around it.
public enum PoolBenchmark {
    public struct Run: Sendable {
        public let eventsPerSecond: Double
        public let verified: Int
    }

    /// `records` are (Kafka key, structured-mode event) pairs, all pushed through `threads` pool threads.
    public static func run(records: [(key: [UInt8]?, value: [UInt8])], verifier: Verifier, threads: Int) -> Run {
        let counter = Tally()
        let retention = RetentionWriter(directory: verifier.directory, keys: nil)
        let work = JobWork(verifier: verifier, intake: RecordIntake(parser: verifier.eventParser), retention: retention,
                           metrics: PipelineMetrics(), log: Logger(minimum: .error))
        let pool = VerificationPool(threads: threads, capacity: threads * 64, verify: { work.complete($0) }, deliver: { outcome in
            if case .completion(let completion) = outcome { counter.add(verified: completion.result?.isVerified == true) }
        })
        defer { pool.stop() }
        let tracker = PartitionTracker()
        let partition = TopicPartition("veridoc.requests", 0)
        tracker.assign(partition, startingAt: 0)
        let start = DispatchTime.now().uptimeNanoseconds
        for (offset, record) in records.enumerated() {
            guard let ticket = tracker.register(partition, offset: Int64(offset)) else { continue }
            let message = KafkaMessage(topicPartition: partition, offset: Int64(offset), key: record.key, value: record.value)
            pool.submit(Job(ticket: ticket, key: record.key, receivedAt: Date(), content: .unread(message)))
        }
        _ = pool.waitUntilIdle(timeout: 3600)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Run(eventsPerSecond: Double(records.count) / seconds, verified: counter.verified)
    }

    private final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add(verified: Bool) { if verified { lock.lock(); count += 1; lock.unlock() } }
        var verified: Int { lock.lock(); defer { lock.unlock() }; return count }
    }
}
