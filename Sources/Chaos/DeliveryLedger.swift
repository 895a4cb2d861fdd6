import Foundation
import Kafka

/// Which planned records are delivered, where (partition, offset), which
/// must be sent again, and how far the workers have stored their positions,
/// for the broker of the current epoch: a broker that is replaced starts a new
/// epoch, and reports from the old one are ignored.
final class DeliveryLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var currentEpoch: UInt64 = 0
    private var currentEpochStarted = Date()
    private var delivered: [Int: (partition: Int32, offset: Int64)] = [:]
    private var offsets: [Int32: [Int64: Int]] = [:]   // partition → offset → planned index
    private var retries: [Int] = []
    private var pending: Set<Int> = []
    private var positions: [Int32: Int64] = [:]

    var epoch: UInt64 { lock.lock(); defer { lock.unlock() }; return currentEpoch }
    /// When the current broker took over: gaps the workers recorded before
    /// then are in an older broker's offsets.
    var epochStarted: Date { lock.lock(); defer { lock.unlock() }; return currentEpochStarted }

    /// Forgets every delivery: the broker that had them is gone.
    func newEpoch() {
        lock.lock()
        currentEpoch += 1
        currentEpochStarted = Date()
        delivered.removeAll()
        offsets.removeAll()
        retries.removeAll()
        pending.removeAll()
        // The positions of the old log would make the backlog of the new one
        // look consumed, and the resend that follows would outrun the bound.
        positions.removeAll()
        lock.unlock()
    }

    /// Stored positions from the sampler's last snapshot, for the producer's backlog bound.
    var storedPositions: [Int32: Int64] {
        get { lock.lock(); defer { lock.unlock() }; return positions }
        set { lock.lock(); positions = newValue; lock.unlock() }
    }

    /// Marks `index` in flight; the token its delivery report must carry.
    func sent(_ index: Int) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        pending.insert(index)
        return currentEpoch << 32 | UInt64(index)
    }

    func report(_ report: KafkaProducer.DeliveryReport) {
        let index = Int(report.token & 0xFFFF_FFFF)
        lock.lock()
        defer { lock.unlock() }
        guard report.token >> 32 == currentEpoch else { return }
        pending.remove(index)
        if report.error == nil, let partition = report.topicPartition?.partition, let offset = report.offset {
            if delivered[index] == nil { delivered[index] = (partition, offset) }
            offsets[partition, default: [:]][offset] = index
        } else if delivered[index] == nil {
            retries.append(index)
        }
    }

    func takeRetries() -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        let taken = retries
        retries.removeAll()
        return taken
    }

    func wasDelivered(_ index: Int) -> Bool { lock.lock(); defer { lock.unlock() }; return delivered[index] != nil }

    /// Where `index` was delivered in this epoch.
    func place(of index: Int) -> (partition: Int32, offset: Int64)? { lock.lock(); defer { lock.unlock() }; return delivered[index] }

    func deliveredCount(of total: Int) -> Int { lock.lock(); defer { lock.unlock() }; return delivered.count }

    /// Per partition: 1 + the highest offset a delivery report named.
    func highWatermarks() -> [Int32: Int64] {
        lock.lock()
        defer { lock.unlock() }
        return offsets.mapValues { ($0.keys.max() ?? -1) + 1 }
    }

    /// partition → offset → planned index, as far as delivery reports tell.
    func offsetMap() -> [Int32: [Int64: Int]] { lock.lock(); defer { lock.unlock() }; return offsets }

    /// The bytes sent and not yet reported: their partition is not known yet.
    func pendingBytes(size: (Int) -> Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return pending.reduce(0) { $0 + size($1) }
    }

    /// Per partition, the bytes delivered at or past its position.
    func backlogBytes(beyond positions: [Int32: Int64], size: (Int) -> Int) -> [Int32: Int] {
        lock.lock()
        defer { lock.unlock() }
        var backlog: [Int32: Int] = [:]
        for (partition, byOffset) in offsets {
            let position = positions[partition] ?? 0
            backlog[partition] = byOffset.reduce(0) { $0 + ($1.key >= position ? size($1.value) : 0) }
        }
        return backlog
    }
}
