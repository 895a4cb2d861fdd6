import Foundation
import Postgres
import Verification

/// What the webhook receiver must have seen once a run converged. Every
/// stored result's outcome was acknowledged (2xx) under its one webhook id,
/// the outcome event's id, whatever the broker lost; nothing came for a
/// result that does not exist; an id came again only with the same body,
/// and that body is the outcome event's wherever the topic still has it;
/// every request verified under a secret the receiver held; and every
/// delivery row ended delivered, one per result.
struct WebhookChecks {
    static let names = ["webhookDelivered", "webhookForStoredResult", "webhookSameBodyPerID", "webhookBodyIsOutcome", "webhookVerified",
                        "webhookRowsDelivered"]

    let receiver: ChaosReceiver
    let invariants: InvariantLedger

    /// Whether every delivery row is delivered (the convergence wait's part):
    /// false while any is pending or dead, or before the table exists.
    static func settled(_ connection: PostgresConnection) -> Bool {
        guard let rows = try? connection.execute("SELECT count(*) AS count FROM webhook_deliveries WHERE state <> 'delivered'") else { return false }
        return rows.int(0, "count") == 0
    }

    /// `results`: the request ids stored; `outcomeDigests`: the SHA-256 (hex)
    /// of each outcome event on the topic, by its id.
    func check(results: Set<String>, outcomeDigests: [String: String], connection: PostgresConnection, into summary: inout ChaosSummary) throws {
        for name in Self.names { invariants.declare(name) }
        let requests = receiver.requests()
        summary.webhookRequests = requests.count
        var acknowledged: [String: Int] = [:]
        var bodies: [String: Set<String>] = [:]
        for request in requests {
            if request.acknowledged { acknowledged[request.webhookID, default: 0] += 1 }
            bodies[request.webhookID, default: []].insert(request.bodyDigest)
            if !request.verified {
                invariants.violation("webhookVerified", "a request under \(request.webhookID) verified under none of the receiver's secrets")
            }
        }
        summary.webhookDuplicates = acknowledged.values.filter { $0 > 1 }.count
        // An answer sent just before a receiverDown kill is in this list and not in the requests' log.
        for id in receiver.acknowledgedIDs() where acknowledged[id] == nil { acknowledged[id] = 1 }
        summary.webhooksAcknowledged = acknowledged.count

        let wanted = Dictionary(uniqueKeysWithValues: results.map { (OutcomeEvent.id(forRequest: $0), $0) })
        for (outcomeID, requestID) in wanted where acknowledged[outcomeID] == nil {
            invariants.violation("webhookDelivered", "result \(requestID): no acknowledged delivery of \(outcomeID)")
        }
        for (id, digests) in bodies {
            if wanted[id] == nil { invariants.violation("webhookForStoredResult", "a delivery \(id) for no stored result") }
            if digests.count > 1 { invariants.violation("webhookSameBodyPerID", "\(id) came with \(digests.count) different bodies") }
            if let published = outcomeDigests[id], let digest = digests.first, digests.count == 1, digest != published {
                invariants.violation("webhookBodyIsOutcome", "\(id): the delivered body is not the outcome event on the topic")
            }
        }

        let states = try connection.execute("SELECT state, count(*) AS count FROM webhook_deliveries GROUP BY state")
        var total = 0
        for row in 0..<states.rowCount {
            let count = Int(states.int(row, "count") ?? 0)
            total += count
            if let state = states.string(row, "state"), state != "delivered" {
                invariants.violation("webhookRowsDelivered", "\(count) deliveries \(state)")
            }
        }
        if total != results.count { invariants.violation("webhookRowsDelivered", "\(total) delivery rows for \(results.count) results") }
    }
}
