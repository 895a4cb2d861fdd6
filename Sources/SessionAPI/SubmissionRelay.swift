import Foundation
import Postgres
import Storage

/// Gets the request events of accepted responses to the broker when their
/// submit could not (a broker outage, a serve that stopped between commit
/// and delivery), and ends the sessions still processing at their expiry.
/// One pass a second on a connection of its own; every serve runs one, and
/// their claims keep them from sending one row twice at once.
enum SubmissionRelay {
    /// Rows one pass claims at most: each may take the delivery timeout, and
    /// the claim must outlast them all, or another relay would send them too.
    static let batch = 10
    /// Failed deliveries after which a pass stops (the broker is away again).
    static let failuresPerPass = 3

    struct Pass: Sendable {
        var relayed = 0
        var waiting = 0
        var failedSessions = 0
        var failedDeliveries = 0
    }

    static func pass(_ connection: PostgresConnection, producer: RequestProducer, grace: TimeInterval, now: Date) throws -> Pass {
        var pass = Pass()
        pass.failedSessions = try connection.execute(SessionsTable.failOverdue(at: now, grace: grace)).rowCount
        // A session that ended without its event has no use for it: what it holds goes now.
        _ = try connection.execute(SubmissionsTable.deleteEnded)
        // A broker that does not answer would hold each row for the delivery timeout: wait for it instead.
        if producer.isReady(timeoutMilliseconds: 1_000) {
            let claim = (producer.deliveryTimeout + 2) * Double(batch) + 5
            for row in SubmissionsTable.rows(try connection.execute(SubmissionsTable.claimDue(forSeconds: claim, limit: batch))) {
                // A row the broker refuses is passed over (its claim brings it back later), not a wall for the rest.
                guard (try? producer.deliver(key: row.key, value: row.event)) != nil else {
                    pass.failedDeliveries += 1
                    if pass.failedDeliveries >= failuresPerPass { break }
                    continue
                }
                _ = try connection.execute(SubmissionsTable.delete(tenant: row.tenant, sessionID: row.sessionID))
                pass.relayed += 1
            }
        }
        pass.waiting = Int(try connection.execute(SubmissionsTable.countWaiting).int(0, "count") ?? 0)
        return pass
    }
}
