import Foundation
import Postgres
import Storage

/// Gets the request events of accepted responses to the broker when their
/// submit could not (a broker outage, a serve that stopped between commit
/// and delivery), and ends the sessions still processing at their expiry.
/// One pass a second on a connection of its own; every serve runs one, and
/// their claims keep them from sending one row twice at once.
enum SubmissionRelay {
    /// Rows one pass claims at most.
    static let batch = 100

    struct Pass: Sendable {
        var relayed = 0
        var waiting = 0
        var failedSessions = 0
    }

    static func pass(_ connection: PostgresConnection, producer: RequestProducer, now: Date) throws -> Pass {
        var pass = Pass()
        pass.failedSessions = try connection.execute(SessionsTable.failOverdue(at: now)).rowCount
        // A broker that does not answer would hold each row for the delivery timeout: wait for it instead.
        if producer.isReady(timeoutMilliseconds: 1_000) {
            let due = SubmissionsTable.rows(try connection.execute(SubmissionsTable.claimDue(forSeconds: producer.deliveryTimeout * 2 + 5, limit: batch)))
            for row in due {
                // The first failure ends the pass: the rest keep their claims and come back with them.
                guard (try? producer.deliver(key: row.key, value: row.event)) != nil else { break }
                _ = try connection.execute(SubmissionsTable.delete(tenant: row.tenant, sessionID: row.sessionID))
                pass.relayed += 1
            }
        }
        pass.waiting = Int(try connection.execute(SubmissionsTable.countWaiting).int(0, "count") ?? 0)
        return pass
    }
}
