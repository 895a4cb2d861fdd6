import Foundation
import Kafka

/// `worker.persisters` persisters, each with its own PostgreSQL connection and
/// queue, every partition always handed to the same one.
///
/// One persister has one transaction in flight, and at peak the worker waited
/// on it: the server's time per batch, not the worker's CPU, set the pace.
/// Two transactions in flight overlap one batch's round trips and commit with
/// the other's work.
///
/// A partition's completions all go to one persister, so its batches are
/// written in order by one thread: the position a batch stores is computed
/// from that partition's own completions (`PartitionTracker`) and never covers
/// work another connection has not committed yet. Across partitions nothing
/// is ordered, and nothing needs to be: nonces are unique in the table, so a
/// replay split over two partitions is decided by whichever commit comes
/// first (the other transaction waits on the unique index, then takes its
/// conflict path; a deadlock between two such batches is 40P01, retried).
final class PersisterGroup: Sendable {
    private let members: [Persister]

    init(_ members: [Persister]) {
        precondition(!members.isEmpty, "a persister group needs a persister")
        self.members = members
    }

    func start() {
        for (index, member) in members.enumerated() { member.start(index: index) }
    }

    /// Blocks while the partition's persister queue is full (backpressure towards the pool).
    func enqueue(_ completion: Completion) {
        member(for: completion).enqueue(completion)
    }

    /// See `Persister.enqueueWithoutWaiting`.
    func enqueueWithoutWaiting(_ completion: Completion) {
        member(for: completion).enqueueWithoutWaiting(completion)
    }

    var backlog: Int { members.reduce(0) { $0 + $1.backlog } }

    /// Waits until everything enqueued before the call is written, or `timeout` passes.
    @discardableResult
    func flush(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var flushed = true
        for member in members {
            flushed = member.flush(timeout: max(0, deadline.timeIntervalSinceNow)) && flushed
        }
        return flushed
    }

    /// Writes what is queued (bounded by `timeout` for all of them together), then stops every thread.
    func stop(timeout: TimeInterval) {
        flush(timeout: timeout)
        for member in members { member.stop(timeout: 0) }
    }

    /// The persister that writes `partition`: by its number, so a topic's
    /// partitions spread evenly (a worker usually owns a run of them).
    static func index(of partition: TopicPartition, among count: Int) -> Int {
        Int(UInt32(bitPattern: partition.partition) % UInt32(count))
    }

    private func member(for completion: Completion) -> Persister {
        members[Self.index(of: completion.ticket.topicPartition, among: members.count)]
    }
}
