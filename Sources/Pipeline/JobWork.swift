import Foundation
import Observability
import Retention
import Verification

/// What a pool thread does with one consumed record: read it, verify it, and
/// prepare its write (outcome JSON, sealed values). All of it is CPU work
/// that parallelises; what is left for the single-threaded stages after it
/// is I/O.
package struct JobWork: Sendable {
    let verifier: Verifier
    let intake: RecordIntake
    let retention: RetentionWriter
    let metrics: PipelineMetrics
    let log: Logger

    package enum Outcome: Sendable {
        /// For the persister.
        case completion(Completion)
        /// For the dead-letter topic (its completion follows the delivery report).
        case deadLetter(Job)
    }

    package init(verifier: Verifier, intake: RecordIntake, retention: RetentionWriter, metrics: PipelineMetrics, log: Logger) {
        self.verifier = verifier
        self.intake = intake
        self.retention = retention
        self.metrics = metrics
        self.log = log
    }

    package func complete(_ consumed: Job) -> Outcome {
        let job = consumed.read(with: intake)
        let result: VerificationResult
        switch job.content {
        case .event(.request(let request)): result = verifier.verify(request, at: Date())
        case .event(.invalid(let rejection)): result = verifier.rejected(rejection, at: Date())
        case .deadLetter(let letter):
            let origin = letter.record.topicPartition
            log.warning("record dead-lettered", ["cause": letter.cause, "topic": origin.topic,
                                                 "partition": "\(origin.partition)", "offset": "\(letter.record.offset)"])
            return .deadLetter(job)
        case .unread:
            preconditionFailure("read(with:) leaves no job unread")
        }
        metrics.processDuration.observe(Date().timeIntervalSince(job.receivedAt))
        let prepared = PreparedWrite(result: result, retention: retention)
        // Personal data is held no longer than it must be: once sealed, the
        // values leave the result here, on the thread that decoded them,
        // rather than in the persister after the commit. Where sealing
        // failed, the persister seals again and needs them.
        let kept = prepared.values == nil ? result : result.releasingElementValues()
        return .completion(Completion(ticket: job.ticket, key: job.key, receivedAt: job.receivedAt, result: kept, prepared: prepared))
    }
}
