import Foundation
import Postgres

/// `session_submissions`: request events serve made from a session's
/// response, kept from the transaction that took the response until the
/// broker acknowledged them. The submit that wrote a row claims it while it
/// delivers; a row whose claim ran out (a broker outage, a crash) is claimed
/// again by any serve's relay, so an accepted response reaches the workers
/// however late. A row goes with its session.
public enum SubmissionsTable {
    /// One request event.
    public struct Row: Sendable, Equatable {
        public let tenant: String
        public let sessionID: UUID
        public let key: [UInt8]
        public let event: [UInt8]

        public init(tenant: String, sessionID: UUID, key: [UInt8], event: [UInt8]) {
            self.tenant = tenant
            self.sessionID = sessionID
            self.key = key
            self.event = event
        }
    }

    /// The row, claimed for `seconds` by the submit that delivers it; a
    /// repeat submit's row is there already and stays as it is.
    public static func insert(_ row: Row, claimedForSeconds seconds: Double) -> PostgresStatement {
        PostgresStatement("""
            INSERT INTO session_submissions (tenant, session_id, kafka_key, event, claimed_until)
            VALUES ($1, $2::uuid, $3, $4, now() + make_interval(secs => $5))
            ON CONFLICT (tenant, session_id) DO NOTHING
            """, [.text(row.tenant), .text(row.sessionID.uuidString.lowercased()), .bytes(row.key), .bytes(row.event), .double(seconds)])
    }

    /// Delivered: the event is the broker's now.
    public static func delete(tenant: String, sessionID: UUID) -> PostgresStatement {
        PostgresStatement("DELETE FROM session_submissions WHERE tenant = $1 AND session_id = $2::uuid",
                          [.text(tenant), .text(sessionID.uuidString.lowercased())])
    }

    /// Claims up to `limit` rows whose claim ran out (oldest first) for
    /// `seconds` and returns them (tenant, session_id, kafka_key, event).
    /// Relays running together skip each other's rows.
    public static func claimDue(forSeconds seconds: Double, limit: Int) -> PostgresStatement {
        PostgresStatement("""
            UPDATE session_submissions SET claimed_until = now() + make_interval(secs => $1)
            WHERE (tenant, session_id) IN (
                SELECT tenant, session_id FROM session_submissions
                WHERE claimed_until IS NULL OR claimed_until < now()
                ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING tenant, session_id::text AS session_id, kafka_key, event
            """, [.double(seconds), .int(Int64(limit))])
    }

    /// The rows of a `claimDue` answer.
    public static func rows(_ result: PostgresResult) -> [Row] {
        (0..<result.rowCount).compactMap { index in
            guard let tenant = result.string(index, "tenant"), let id = result.string(index, "session_id").flatMap(UUID.init(uuidString:)),
                  let key = result.bytes(index, "kafka_key"), let event = result.bytes(index, "event")
            else { return nil }
            return Row(tenant: tenant, sessionID: id, key: key, event: event)
        }
    }

    /// Rows of sessions that ended (failed, or gone past their grace)
    /// without their event reaching the broker: it would be for an expired
    /// nonce, and it holds the response, so it goes.
    public static let deleteEnded = PostgresStatement("""
        DELETE FROM session_submissions w USING sessions s
        WHERE s.tenant = w.tenant AND s.id = w.session_id AND s.status <> 'processing'
        """)

    /// Up to `limit` waiting rows of one request or tenant: erasure. A
    /// request made from a session has the session's id (SessionSubmission).
    /// A row deleted here never reaches a worker, so its session ends failed
    /// at expiry, as for a broker that never came back; one the broker
    /// already took is verified and stored like any request still in Kafka.
    public static func delete(matching scope: ErasureScope, limit: Int) -> PostgresStatement {
        let rows = switch scope {
        case .request: "session_id::text = $1"
        case .tenant: "tenant = $1"
        }
        return .boundedDelete(from: "session_submissions", key: "tenant, session_id", where: rows, .text(scope.value), limit: limit)
    }

    /// Rows waiting for the broker (column `count`).
    public static let countWaiting = PostgresStatement("SELECT count(*) AS count FROM session_submissions")
}
