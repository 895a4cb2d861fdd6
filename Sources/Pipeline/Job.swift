import Foundation
import Kafka
import Verification

/// One consumed record on its way through the worker.
package struct Job: Sendable {
    let ticket: PartitionTracker.Ticket
    let key: [UInt8]?
    let receivedAt: Date
    let content: Content

    package init(ticket: PartitionTracker.Ticket, key: [UInt8]?, receivedAt: Date, content: Content) {
        self.ticket = ticket
        self.key = key
        self.receivedAt = receivedAt
        self.content = content
    }

    package enum Content: Sendable {
        /// As consumed: read (parsed) on a pool thread, not the consumer's.
        case unread(KafkaMessage)
        /// A record attributable to an event: verified by the pool.
        case event(ParsedRecord)
        /// A record that cannot be attributed: sent to the dead-letter topic.
        case deadLetter(DeadLetter)
    }
}

extension Job {
    /// The job with its record read; jobs already read are returned as they are.
    func read(with intake: RecordIntake) -> Job {
        guard case .unread(let record) = content else { return self }
        return Job(ticket: ticket, key: key, receivedAt: receivedAt, content: intake.read(record))
    }
}

/// A record's event, as far as it could be read.
package enum ParsedRecord: Sendable {
    case request(VerificationRequest)
    case invalid(EventRejection)
}

package struct DeadLetter: Sendable {
    /// Stable cause, e.g. `record.too_large`; goes into the DLQ headers.
    let cause: String
    let record: KafkaMessage
}

/// What the persister receives: a verified result, or a dead-lettered record
/// whose delivery completed (so its offset may be passed).
package struct Completion: Sendable {
    let ticket: PartitionTracker.Ticket
    let key: [UInt8]?
    let receivedAt: Date
    /// Without element values where `prepared` holds them sealed (`JobWork`).
    package let result: VerificationResult?
    /// Work for the write done ahead on the pool's thread (nil: the persister
    /// does it, from the values in `result`).
    var prepared: PreparedWrite? = nil
    /// The result was refused by the database once and cut down to its id.
    var isStripped = false
}

