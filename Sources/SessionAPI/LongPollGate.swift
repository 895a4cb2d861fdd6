import Synchronization

/// How many long polls (`GET /v1/sessions/{id}?wait=`) wait at once. Each
/// holds an HTTP connection for up to 30 s (not a thread, nor a database
/// connection: it waits for its session's notification), so without a cap
/// one tenant's polls take every connection of the daemon. Per tenant at most `perTenant`, and all tenants
/// together at most `total` (half the connections), so the rest always stays
/// for requests that answer at once; beyond either, 429 with Retry-After.
final class LongPollGate: Sendable {
    private let perTenant: Int
    private let total: Int
    private let waiting = Mutex<(total: Int, byTenant: [String: Int])>((0, [:]))

    init(perTenant: Int, total: Int) {
        self.perTenant = max(0, perTenant)
        self.total = max(0, total)
    }

    /// Counts a poll of `tenant` in, or says no (and counts nothing).
    func enter(_ tenant: String) -> Bool {
        waiting.withLock { waiting in
            let mine = waiting.byTenant[tenant, default: 0]
            guard mine < perTenant, waiting.total < total else { return false }
            waiting.byTenant[tenant] = mine + 1
            waiting.total += 1
            return true
        }
    }

    func leave(_ tenant: String) {
        waiting.withLock { waiting in
            let mine = waiting.byTenant[tenant, default: 0]
            guard mine > 0 else { return }
            waiting.byTenant[tenant] = mine == 1 ? nil : mine - 1
            waiting.total -= 1
        }
    }
}
