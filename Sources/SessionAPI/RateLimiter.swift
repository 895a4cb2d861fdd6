import Foundation
import Synchronization

/// A token bucket per API key: `rate` requests a second on average, `burst`
/// at once. The buckets are keyed by tenant and key hash, not by the key, so
/// the key itself is never kept; the table is bounded, and the oldest
/// buckets go first when it is full (a full bucket and a forgotten one allow
/// the same).
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: TimeInterval
    }

    private let rate: Double
    private let burst: Double
    private let capacity: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    public init(requestsPerSecond: Int, burst: Int, capacity: Int = 100_000) {
        rate = Double(max(requestsPerSecond, 1))
        self.burst = Double(max(burst, 1))
        self.capacity = max(capacity, 1)
    }

    /// nil when the request may go ahead (and is counted); otherwise the whole seconds to wait.
    public func admit(_ key: String, now: TimeInterval = ProcessInfo.processInfo.systemUptime) -> Int? {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
            }
            bucket.tokens -= 1
            if buckets[key] == nil && buckets.count >= capacity {
                // Linear, but only when the table is full, and then once per new key at most.
                if let oldest = buckets.min(by: { $0.value.updated < $1.value.updated })?.key { buckets[oldest] = nil }
            }
            buckets[key] = bucket
            return nil
        }
    }
}
