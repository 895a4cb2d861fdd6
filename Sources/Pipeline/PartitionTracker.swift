import Foundation
import Kafka

/// Which offsets of each assigned partition are in flight, and the position
/// that may be stored: the lowest offset not yet durably done (so no position
/// ever moves past unfinished work, however out of order work completes).
///
/// Each assignment of a partition gets a new generation; completions from an
/// earlier generation (work started before a revoke) are ignored.
package final class PartitionTracker: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var partitions: [TopicPartition: State] = [:]
    private var nextGeneration: UInt64 = 1

    package init() {}

    package struct Ticket: Sendable, Hashable {
        let topicPartition: TopicPartition
        let offset: Int64
        let generation: UInt64
    }

    private struct State {
        let generation: UInt64
        /// The position already durable (stored in PostgreSQL).
        var durable: Int64
        /// Offsets handed out and not yet durable, ascending, with done flags.
        var offsets: [Int64] = []
        var done: [Bool] = []
        var head = 0
        /// Highest offset handed out; a re-fetched older offset is not handed out twice.
        var highest: Int64

        mutating func compact() {
            if head > 512 && head * 2 > offsets.count {
                offsets.removeFirst(head)
                done.removeFirst(head)
                head = 0
            }
        }

        /// The position after marking `completing` done (without changing state).
        func watermark(completing: Set<Int64>) -> Int64 {
            var index = head
            var position = durable
            while index < offsets.count, done[index] || completing.contains(offsets[index]) {
                position = offsets[index] + 1
                index += 1
            }
            return index == offsets.count ? max(position, highest + 1) : position
        }
    }

    package func assign(_ partition: TopicPartition, startingAt offset: Int64) {
        lock.lock()
        defer { lock.unlock() }
        partitions[partition] = State(generation: nextGeneration, durable: offset, highest: offset - 1)
        nextGeneration += 1
    }

    func revoke(_ partition: TopicPartition) {
        lock.lock()
        partitions[partition] = nil
        lock.unlock()
    }

    func isAssigned(_ partition: TopicPartition) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return partitions[partition] != nil
    }

    /// The offset after the highest one handed out; nil when not assigned.
    func nextOffset(_ partition: TopicPartition) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        return partitions[partition].map { $0.highest + 1 }
    }

    /// Hands out a ticket for a consumed offset; nil when the partition is not
    /// assigned or the offset was handed out already.
    package func register(_ partition: TopicPartition, offset: Int64) -> Ticket? {
        lock.lock()
        defer { lock.unlock() }
        guard var state = partitions[partition], offset > state.highest else { return nil }
        state.offsets.append(offset)
        state.done.append(false)
        state.highest = offset
        partitions[partition] = state
        return Ticket(topicPartition: partition, offset: offset, generation: state.generation)
    }

    /// Positions to store if `tickets` become durable, for the partitions they
    /// touch that are still assigned in the same generation.
    func positions(completing tickets: [Ticket]) -> [TopicPartition: Int64] {
        lock.lock()
        defer { lock.unlock() }
        var byPartition: [TopicPartition: Set<Int64>] = [:]
        for ticket in tickets where partitions[ticket.topicPartition]?.generation == ticket.generation {
            byPartition[ticket.topicPartition, default: []].insert(ticket.offset)
        }
        var positions: [TopicPartition: Int64] = [:]
        for (partition, offsets) in byPartition {
            guard let state = partitions[partition] else { continue }
            let position = state.watermark(completing: offsets)
            if position > state.durable { positions[partition] = position }
        }
        return positions
    }

    /// Records that `tickets` are durable and their partitions' positions stored.
    func markDurable(_ tickets: [Ticket]) {
        lock.lock()
        defer { lock.unlock() }
        for ticket in tickets {
            guard var state = partitions[ticket.topicPartition], state.generation == ticket.generation else { continue }
            var low = state.head
            var high = state.offsets.count
            while low < high {
                let middle = (low + high) / 2
                if state.offsets[middle] < ticket.offset { low = middle + 1 } else { high = middle }
            }
            if low < state.offsets.count && state.offsets[low] == ticket.offset { state.done[low] = true }
            while state.head < state.offsets.count && state.done[state.head] {
                state.durable = state.offsets[state.head] + 1
                state.head += 1
            }
            state.compact()
            partitions[ticket.topicPartition] = state
        }
    }

    var assigned: [TopicPartition] {
        lock.lock()
        defer { lock.unlock() }
        return Array(partitions.keys)
    }
}
