import Foundation
import Postgres

/// `webhook_deliveries`: one row per outcome event and webhook endpoint,
/// written in the transaction that writes the outcome (so a crash never
/// loses one), claimed by one worker's dispatcher at a time, and finished as
/// delivered or dead. A delivered row keeps no payload; finished rows go
/// after `webhooks.keepFinishedHours`. `webhook_endpoints` holds the
/// endpoints a receiver disabled (410 Gone).
public enum WebhookDeliveriesTable {
    static let columns: [PostgresColumn] = [
        .init("tenant", "text"), .init("endpoint", "text"), .init("webhook_id", "text"), .init("event_id", "text"),
        .init("event_type", "text"), .init("payload", "text"), .init("has_claims", "boolean"),
    ]

    /// A delivery to make: `webhookID` is the CloudEvent's id, the receiver's idempotency key.
    public struct Row: Sendable, Equatable {
        public let tenant: String
        public let endpoint: String
        public let webhookID: String
        public let eventID: String
        public let eventType: String
        public let payload: String
        public let hasClaims: Bool

        public init(tenant: String, endpoint: String, webhookID: String, eventID: String, eventType: String, payload: String, hasClaims: Bool) {
            self.tenant = tenant
            self.endpoint = endpoint
            self.webhookID = webhookID
            self.eventID = eventID
            self.eventType = eventType
            self.payload = payload
            self.hasClaims = hasClaims
        }
    }

    /// The rows, due now; one already there (the same event found again) stays as it is.
    public static func insert(_ rows: [Row]) throws(PostgresError) -> PostgresStatement {
        try .insertColumns(
            into: "webhook_deliveries", columns: columns,
            rows: rows.map { row in
                [.text(row.tenant), .text(row.endpoint), .text(row.webhookID), .text(row.eventID), .text(row.eventType),
                 .text(row.payload), .bool(row.hasClaims)]
            },
            suffix: "ON CONFLICT (tenant, endpoint, webhook_id) DO NOTHING")
    }

    /// How many due deliveries to claim for one endpoint.
    public typealias Want = (tenant: String, endpoint: String, count: Int)

    /// A claimed delivery.
    public struct Claimed: Sendable, Equatable {
        public let tenant: String
        public let endpoint: String
        public let webhookID: String
        public let eventType: String
        public let payload: String
        /// Attempts made before this one.
        public let attempts: Int
    }

    /// Claims, for `worker` and `seconds`, up to `want.count` due pending
    /// deliveries of each endpoint (oldest due first): each endpoint is
    /// served its share, so one with a long backlog never holds back
    /// another. Dispatchers claiming together skip each other's rows. The
    /// clock is the statement's, not its transaction's: a claim made after a
    /// wait in the same transaction still lasts its whole time.
    public static func claimDue(_ wants: [Want], by worker: String, forSeconds seconds: Double) -> PostgresStatement {
        PostgresStatement("""
            UPDATE webhook_deliveries d SET claimed_by = $1, claimed_until = clock_timestamp() + make_interval(secs => $2)
            FROM (
                SELECT c.tenant, c.endpoint, c.webhook_id
                FROM unnest($3::text[], $4::text[], $5::text[]::int[]) AS e(tenant, endpoint, n)
                CROSS JOIN LATERAL (
                    SELECT w.tenant, w.endpoint, w.webhook_id FROM webhook_deliveries w
                    WHERE w.tenant = e.tenant AND w.endpoint = e.endpoint AND w.state = 'pending' AND w.next_attempt_at <= clock_timestamp()
                      AND (w.claimed_until IS NULL OR w.claimed_until < clock_timestamp())
                    ORDER BY w.next_attempt_at LIMIT e.n FOR UPDATE SKIP LOCKED) c
            ) picked
            WHERE d.tenant = picked.tenant AND d.endpoint = picked.endpoint AND d.webhook_id = picked.webhook_id
            RETURNING d.tenant, d.endpoint, d.webhook_id, d.event_type, d.payload, d.attempts
            """, [.text(worker), .double(seconds), .textArray(wants.map(\.tenant)), .textArray(wants.map(\.endpoint)),
                  .textArray(wants.map { String($0.count) })])
    }

    /// The rows of a `claimDue` answer.
    public static func claimed(_ result: PostgresResult) -> [Claimed] {
        (0..<result.rowCount).compactMap { index in
            guard let tenant = result.string(index, "tenant"), let endpoint = result.string(index, "endpoint"),
                  let id = result.string(index, "webhook_id"), let type = result.string(index, "event_type"),
                  let payload = result.string(index, "payload"), let attempts = result.int(index, "attempts")
            else { return nil }
            return Claimed(tenant: tenant, endpoint: endpoint, webhookID: id, eventType: type, payload: payload, attempts: Int(attempts))
        }
    }

    /// How one attempt ended.
    public enum Outcome: Sendable, Equatable {
        /// 2xx: finished, its payload dropped.
        case delivered(status: Int)
        /// Tried again `afterSeconds` from now (the database's now: one clock
        /// for every worker); `status` the answer, if one came; `error` a stable word.
        case retry(afterSeconds: Double, status: Int?, error: String)
        /// The last attempt failed.
        case dead(status: Int?, error: String)
        /// 410: the endpoint is disabled; the delivery waits, its attempt not counted against it.
        case endpointGone
    }

    /// Records one attempt of `delivery`, claimed by `worker`: only while the
    /// row is as the claim left it (still this worker's, still pending, the
    /// same attempts), so a late or repeated record (the claim ran out and
    /// another worker took the row, or a commit's answer was lost) changes nothing.
    public static func record(_ delivery: Claimed, by worker: String, _ outcome: Outcome) -> PostgresStatement {
        let key: [PostgresValue] = [.text(delivery.tenant), .text(delivery.endpoint), .text(delivery.webhookID), .text(worker), .int(Int64(delivery.attempts))]
        let row = "tenant = $1 AND endpoint = $2 AND webhook_id = $3 AND claimed_by = $4 AND attempts = $5 AND state = 'pending'"
        switch outcome {
        case .delivered(let status):
            return PostgresStatement("""
                UPDATE webhook_deliveries SET state = 'delivered', payload = NULL, has_claims = false, attempts = attempts + 1,
                    last_status = $6, last_error = NULL, finished_at = now(), claimed_by = NULL, claimed_until = NULL WHERE \(row)
                """, key + [.int(Int64(status))])
        case .retry(let seconds, let status, let error):
            return PostgresStatement("""
                UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $6), last_status = $7,
                    last_error = $8, claimed_by = NULL, claimed_until = NULL WHERE \(row)
                """, key + [.double(seconds), status.map { .int(Int64($0)) } ?? .null, .text(error)])
        case .dead(let status, let error):
            return PostgresStatement("""
                UPDATE webhook_deliveries SET state = 'dead', attempts = attempts + 1, last_status = $6, last_error = $7,
                    finished_at = now(), claimed_by = NULL, claimed_until = NULL WHERE \(row)
                """, key + [status.map { .int(Int64($0)) } ?? .null, .text(error)])
        case .endpointGone:
            return PostgresStatement("""
                WITH gone AS (
                    INSERT INTO webhook_endpoints (tenant, endpoint, disabled_status) SELECT $1, $2, 410
                    WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE \(row))
                    ON CONFLICT (tenant, endpoint) DO NOTHING)
                UPDATE webhook_deliveries SET last_status = 410, last_error = 'endpoint_gone', claimed_by = NULL, claimed_until = NULL WHERE \(row)
                """, key)
        }
    }

    /// The disabled endpoints (tenant, endpoint).
    public static let disabledEndpoints = PostgresStatement("SELECT tenant, endpoint FROM webhook_endpoints")

    /// An endpoint disabled by a 410 takes deliveries again; its waiting ones are due now.
    public static func enable(tenant: String, endpoint: String) -> PostgresStatement {
        PostgresStatement("""
            WITH enabled AS (DELETE FROM webhook_endpoints WHERE tenant = $1 AND endpoint = $2 RETURNING tenant)
            UPDATE webhook_deliveries SET next_attempt_at = now()
            WHERE tenant = $1 AND endpoint = $2 AND state = 'pending' AND EXISTS (SELECT 1 FROM enabled)
            """, [.text(tenant), .text(endpoint)])
    }

    /// Pending deliveries older than `seconds` (an endpoint removed from the
    /// config, or disabled and never enabled) die as `expired`, so that none,
    /// and no sealed claims in one, is kept for ever; up to `limit` of them,
    /// each returned (tenant, endpoint) to be counted.
    public static func expire(olderThanSeconds seconds: Int, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            UPDATE webhook_deliveries SET state = 'dead', last_error = 'expired', finished_at = now(), claimed_by = NULL, claimed_until = NULL
            WHERE (tenant, endpoint, webhook_id) IN (
                SELECT tenant, endpoint, webhook_id FROM webhook_deliveries
                WHERE state = 'pending' AND created_at < now() - make_interval(secs => $1::double precision) LIMIT $2)
            RETURNING tenant, endpoint
            """, [.double(Double(seconds)), .int(Int64(limit))])
    }

    /// Dead deliveries (of one tenant, or all) pending again from their first attempt (column-less answer; `rowCount` says how many).
    public static func redeliverDead(tenant: String?, webhookID: String?) -> PostgresStatement {
        PostgresStatement("""
            UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL, last_error = NULL
            WHERE state = 'dead' AND ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR webhook_id = $2)
            RETURNING webhook_id
            """, [tenant.map(PostgresValue.text) ?? .null, webhookID.map(PostgresValue.text) ?? .null])
    }

    /// Up to `limit` deliveries, newest first, of one state (or any) and tenant (or all), for `veridoc webhooks list`.
    public static func list(state: String?, tenant: String?, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            SELECT tenant, endpoint, webhook_id, event_type, state, attempts, last_status, last_error, next_attempt_at, created_at, finished_at
            FROM webhook_deliveries
            WHERE ($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR tenant = $2)
            ORDER BY created_at DESC LIMIT $3
            """, [state.map(PostgresValue.text) ?? .null, tenant.map(PostgresValue.text) ?? .null, .int(Int64(limit))])
    }

    /// Finished deliveries older than `hours`, up to `limit` of them.
    public static func deleteFinished(olderThanHours hours: Int, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            DELETE FROM webhook_deliveries WHERE (tenant, endpoint, webhook_id) IN (
                SELECT tenant, endpoint, webhook_id FROM webhook_deliveries
                WHERE state <> 'pending' AND finished_at < now() - make_interval(hours => $1::int) LIMIT $2)
            """, [.int(Int64(hours)), .int(Int64(limit))])
    }

    /// Pending deliveries (column `count`).
    public static let countPending = PostgresStatement("SELECT count(*) AS count FROM webhook_deliveries WHERE state = 'pending'")

    /// Removes the sealed claims and the age answers from up to `limit`
    /// waiting payloads of one request or tenant (`has_claims` marks them).
    public static func stripClaims(matching scope: ErasureScope, limit: Int) -> PostgresStatement {
        ClaimsStripping(table: "webhook_deliveries", column: "payload", key: ["tenant", "endpoint", "webhook_id"], holdsClaims: "has_claims",
                        alsoSet: "has_claims = false", requestRows: "event_id = $1", tenantRows: "tenant = $1")
            .statement(scope, limit: limit)
    }
}
