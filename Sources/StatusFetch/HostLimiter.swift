import Foundation

/// At most `limit` fetches to one host:port at once. Many credentials name
/// the same status list, and a verifier under load must not open a
/// connection to one issuer per credential: callers past the limit wait for
/// a slot, each until its own deadline.
///
/// Unchecked Sendable: all state is guarded by `condition`'s lock.
final class HostLimiter: @unchecked Sendable {
    private let condition = NSCondition()
    private var active: [String: Int] = [:]
    private var waiting: [String: Int] = [:]
    let limit: Int

    init(limit: Int) {
        // A limit below one would make every fetch wait forever.
        self.limit = max(1, limit)
    }

    /// Takes a slot for `key`, waiting while `limit` are taken; false if
    /// `deadline` (monotonic) passed first, and then no slot is held.
    func acquire(_ key: String, before deadline: ContinuousClock.Instant) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        waiting[key, default: 0] += 1
        defer {
            waiting[key]! -= 1
            if waiting[key] == 0 { waiting[key] = nil }
        }
        while active[key, default: 0] >= limit {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            // NSCondition waits on the wall clock; the monotonic deadline is
            // checked again on each wake, so a clock step cannot extend it.
            _ = condition.wait(until: Date(timeIntervalSinceNow: Self.seconds(left)))
        }
        active[key, default: 0] += 1
        return true
    }

    func release(_ key: String) {
        condition.lock()
        defer { condition.unlock() }
        guard let count = active[key] else { return }
        active[key] = count > 1 ? count - 1 : nil
        // One condition serves every host, so every waiter looks again.
        condition.broadcast()
    }

    /// Callers waiting for a slot for `key` now (for tests: a caller that must block is observed blocking).
    func waitingCount(_ key: String) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting[key, default: 0]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
