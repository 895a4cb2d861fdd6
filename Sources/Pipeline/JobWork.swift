import Foundation
import Observability
import Retention
import Revocation
import Verification

/// What a pool thread does with one consumed record: read it, verify it, and
/// prepare its write (outcome JSON, sealed values). All of it is CPU work
/// that parallelises; what is left for the single-threaded stages after it
/// is I/O. A result whose documents name revocation lists is finished by the
/// status service once the lists are read, off the pool thread when they are
/// not cached.
package struct JobWork: Sendable {
    let verifier: Verifier
    let intake: RecordIntake
    let retention: RetentionWriter
    let metrics: PipelineMetrics
    let log: Logger
    /// Reads the revocation lists documents name; nil: such documents are undetermined.
    let status: StatusService?

    package enum Outcome: Sendable {
        /// For the persister.
        case completion(Completion)
        /// For the dead-letter topic (its completion follows the delivery report).
        case deadLetter(Job)
    }

    package init(verifier: Verifier, intake: RecordIntake, retention: RetentionWriter, metrics: PipelineMetrics, log: Logger,
                 status: StatusService? = nil) {
        self.status = status
        self.verifier = verifier
        self.intake = intake
        self.retention = retention
        self.metrics = metrics
        self.log = log
    }

    /// `complete`, waiting for a list fetch where one is needed (benchmarks, tests).
    package func complete(_ consumed: Job) -> Outcome {
        let done = DispatchSemaphore(value: 0)
        let box = OutcomeBox()
        complete(consumed) { outcome in
            box.outcome = outcome
            done.signal()
        }
        done.wait()
        return box.outcome!
    }

    /// Reads and verifies the job, then calls `finish` once: on this thread,
    /// or on the status service's when the documents' lists must be fetched.
    package func complete(_ consumed: Job, finish: @escaping @Sendable (Outcome) -> Void) {
        let job = consumed.read(with: intake)
        let result: VerificationResult
        switch job.content {
        case .event(.request(let request)): result = verifier.verify(request, at: Date())
        case .event(.invalid(let rejection)): result = verifier.rejected(rejection, at: Date())
        case .deadLetter(let letter):
            let origin = letter.record.topicPartition
            log.warning("record dead-lettered", ["cause": letter.cause, "topic": origin.topic,
                                                 "partition": "\(origin.partition)", "offset": "\(letter.record.offset)"])
            return finish(.deadLetter(job))
        case .unread:
            preconditionFailure("read(with:) leaves no job unread")
        }
        let queries = result.pendingStatusQueries
        guard !queries.isEmpty else { return finish(prepared(job, result.recordingStatus([]))) }
        guard let status else {
            let cause = StatusUndetermined(step: "fetch", detail: "this worker has no status service")
            return finish(prepared(job, result.recordingStatus(queries.map { _ in .undetermined(cause) })))
        }
        // Lists in the cache answer here, on this thread; the others on the service's.
        status.resolve(queries, at: result.verifiedAt) { [metrics] answers in
            for case .undetermined(let cause) in answers { metrics.statusUndetermined.increment(cause.step) }
            finish(prepared(job, result.recordingStatus(answers)))
        }
    }

    private func prepared(_ job: Job, _ result: VerificationResult) -> Outcome {
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

private final class OutcomeBox: @unchecked Sendable {
    var outcome: JobWork.Outcome?
}
