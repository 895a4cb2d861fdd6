import Foundation
import Postgres

/// Right to erasure: removes a person's (one request's) or a whole tenant's
/// retained values on demand, and the sealed claims of their outcomes still
/// in the outbox. Results and element metadata stay: they are the
/// non-personal facts analytics count.
public struct Eraser: Sendable {
    public let batchSize: Int

    public init(batchSize: Int) {
        self.batchSize = batchSize
    }

    public struct Erased: Sendable, Equatable {
        public var values = 0
        public var claims = 0
        /// Results rows matching the request/tenant, kept.
        public var resultsKept = 0
    }

    public func forget(request eventID: String, on connection: PostgresConnection) throws -> Erased {
        try erase(filter: "event_id = $1", outboxFilter: "event_id = $1", resultsFilter: "event_id = $1", value: eventID, on: connection)
    }

    public func forget(tenant: String, on connection: PostgresConnection) throws -> Erased {
        try erase(filter: "tenant = $1", outboxFilter: "event_id IN (SELECT event_id FROM results WHERE tenant = $1)",
                  resultsFilter: "tenant = $1", value: tenant, on: connection)
    }

    /// Bounded statements, each committed on its own, so erasing a large
    /// tenant never holds locks the write path waits for.
    private func erase(filter: String, outboxFilter: String, resultsFilter: String, value: String, on connection: PostgresConnection) throws -> Erased {
        var erased = Erased()
        let limit = PostgresValue.int(Int64(batchSize))
        while true {
            let deleted = try connection.execute("""
                DELETE FROM element_values WHERE (event_id, namespace, element, retain_until) IN (
                    SELECT event_id, namespace, element, retain_until FROM element_values WHERE \(filter) LIMIT $2)
                """, [.text(value), limit]).affectedRows
            erased.values += deleted
            if deleted < batchSize { break }
        }
        while true {
            let stripped = try connection.execute("""
                UPDATE outbox SET payload = (payload::jsonb #- '{data,claims}')::text, has_claims = false
                WHERE id IN (SELECT id FROM outbox WHERE has_claims AND \(outboxFilter) LIMIT $2)
                """, [.text(value), limit]).affectedRows
            erased.claims += stripped
            if stripped < batchSize { break }
        }
        erased.resultsKept = Int(try connection.execute("SELECT count(*) AS count FROM results WHERE \(resultsFilter)", [.text(value)]).int(0, "count") ?? 0)
        return erased
    }
}
