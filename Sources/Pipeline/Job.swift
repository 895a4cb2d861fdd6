import Foundation
import Kafka
import Verification

/// One consumed record on its way through the worker.
struct Job: Sendable {
    let ticket: PartitionTracker.Ticket
    let key: [UInt8]?
    let receivedAt: Date
    let content: Content

    enum Content: Sendable {
        /// A record attributable to an event: verified by the pool.
        case event(ParsedRecord)
        /// A record that cannot be attributed: sent to the dead-letter topic.
        case deadLetter(DeadLetter)
    }
}

/// A record's event, as far as it could be read.
enum ParsedRecord: Sendable {
    case request(VerificationRequest)
    case invalid(EventRejection)
}

struct DeadLetter: Sendable {
    /// Stable cause, e.g. `record.too_large`; goes into the DLQ headers.
    let cause: String
    let record: KafkaMessage
}

/// What the persister receives: a verified result, or a dead-lettered record
/// whose delivery completed (so its offset may be passed).
struct Completion: Sendable {
    let ticket: PartitionTracker.Ticket
    let key: [UInt8]?
    let receivedAt: Date
    let result: VerificationResult?
}
