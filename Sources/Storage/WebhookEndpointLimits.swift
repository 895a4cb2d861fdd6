import Foundation
import Postgres

/// An endpoint's `maxConcurrency` and `maxPerSecond` held for the whole
/// deployment, not per worker process: a receiver's limits are about the
/// receiver. Attempts under way anywhere are the endpoint's claimed pending
/// rows; its rate is a token bucket in `webhook_rate_buckets` (migration 23),
/// refilled at `maxPerSecond` up to one second's worth. A claim pass locks
/// the endpoints' bucket rows first, skipping any another pass holds (that
/// endpoint waits for this worker's next pass: its limits hold either way,
/// and a pass that hangs, a worker stopped mid-transaction, holds up only
/// its own endpoints); its next statement (a new snapshot under READ
/// COMMITTED) sees the claims every earlier pass committed.
public enum WebhookEndpointLimits {
    /// What one dispatcher would claim for an endpoint, and the endpoint's limits.
    public struct Want: Sendable, Equatable {
        public let tenant: String
        public let endpoint: String
        /// At most this many (its idle threads).
        public let count: Int
        public let maxConcurrency: Int
        public let maxPerSecond: Int

        public init(tenant: String, endpoint: String, count: Int, maxConcurrency: Int, maxPerSecond: Int) {
            (self.tenant, self.endpoint, self.count) = (tenant, endpoint, count)
            (self.maxConcurrency, self.maxPerSecond) = (maxConcurrency, maxPerSecond)
        }
    }

    /// Claims, in one transaction, up to `idle` due deliveries for `worker`
    /// over the endpoints of `wants` in their order, each within its limits
    /// across every worker. `connection` must not be inside a transaction.
    public static func claim(_ wants: [Want], idle: Int, by worker: String, forSeconds seconds: Double,
                             on connection: PostgresConnection) throws -> [WebhookDeliveriesTable.Claimed] {
        guard !wants.isEmpty, idle > 0 else { return [] }
        let tenants = wants.map(\.tenant), endpoints = wants.map(\.endpoint)
        return try connection.transaction { db in
            // A row another transaction is inserting is waited for, briefly: past it, this pass ends (SQLSTATE 55P03).
            try db.execute("SET LOCAL lock_timeout = '2s'")
            // In one order everywhere, so that two passes creating rows cannot deadlock.
            try db.execute(PostgresStatement("""
                INSERT INTO webhook_rate_buckets (tenant, endpoint, tokens)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[]::float8[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING
                """, [.textArray(tenants), .textArray(endpoints), .textArray(wants.map { String($0.maxPerSecond) })]))
            let locked = try db.execute(PostgresStatement("""
                SELECT b.tenant, b.endpoint FROM webhook_rate_buckets b JOIN unnest($1::text[], $2::text[]) AS e(tenant, endpoint)
                    ON b.tenant = e.tenant AND b.endpoint = e.endpoint
                ORDER BY b.tenant, b.endpoint FOR UPDATE OF b SKIP LOCKED
                """, [.textArray(tenants), .textArray(endpoints)]))
            let mine = Set((0..<locked.rowCount).compactMap { row in
                locked.string(row, "tenant").flatMap { tenant in locked.string(row, "endpoint").map { key(tenant, $0) } }
            })
            let state = try db.execute(PostgresStatement("""
                SELECT e.tenant, e.endpoint,
                    least(e.per_second, b.tokens + e.per_second * extract(epoch FROM clock_timestamp() - b.refilled_at)) AS tokens,
                    (SELECT count(*) FROM webhook_deliveries d WHERE d.tenant = e.tenant AND d.endpoint = e.endpoint
                        AND d.state = 'pending' AND d.claimed_until IS NOT NULL AND d.claimed_until > clock_timestamp()) AS under_way
                FROM unnest($1::text[], $2::text[], $3::text[]::float8[]) AS e(tenant, endpoint, per_second)
                JOIN webhook_rate_buckets b ON b.tenant = e.tenant AND b.endpoint = e.endpoint
                """, [.textArray(tenants), .textArray(endpoints), .textArray(wants.map { String($0.maxPerSecond) })]))
            var tokens: [String: Double] = [:], underWay: [String: Int] = [:]
            for row in 0..<state.rowCount {
                guard let tenant = state.string(row, "tenant"), let endpoint = state.string(row, "endpoint") else { continue }
                tokens[key(tenant, endpoint)] = state.double(row, "tokens") ?? 0
                underWay[key(tenant, endpoint)] = Int(state.int(row, "under_way") ?? 0)
            }
            var left = idle
            var allowed: [WebhookDeliveriesTable.Want] = []
            for want in wants where left > 0 && mine.contains(key(want.tenant, want.endpoint)) {
                let k = key(want.tenant, want.endpoint)
                let count = min(want.count, want.maxConcurrency - underWay[k, default: 0], Int((tokens[k] ?? 0).rounded(.down)), left)
                if count > 0 {
                    allowed.append((tenant: want.tenant, endpoint: want.endpoint, count: count))
                    left -= count
                }
            }
            guard !allowed.isEmpty else { return [] }
            let claimed = WebhookDeliveriesTable.claimed(try db.execute(WebhookDeliveriesTable.claimDue(allowed, by: worker, forSeconds: seconds)))
            var taken: [String: Int] = [:]
            for delivery in claimed { taken[key(delivery.tenant, delivery.endpoint), default: 0] += 1 }
            let spent = allowed.map { want in
                (want, (tokens[key(want.tenant, want.endpoint)] ?? 0) - Double(taken[key(want.tenant, want.endpoint), default: 0]))
            }
            try db.execute(PostgresStatement("""
                UPDATE webhook_rate_buckets b SET tokens = s.tokens, refilled_at = clock_timestamp()
                FROM unnest($1::text[], $2::text[], $3::text[]::float8[]) AS s(tenant, endpoint, tokens)
                WHERE b.tenant = s.tenant AND b.endpoint = s.endpoint
                """, [.textArray(spent.map(\.0.tenant)), .textArray(spent.map(\.0.endpoint)), .textArray(spent.map { String($0.1) })]))
            return claimed
        }
    }

    /// Tenant and endpoint ids as one dictionary key (a NUL cannot be in either: both come from the config).
    private static func key(_ tenant: String, _ endpoint: String) -> String { tenant + "\u{0}" + endpoint }
}
