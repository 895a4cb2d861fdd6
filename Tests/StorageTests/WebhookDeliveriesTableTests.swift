import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// `webhook_deliveries` against a freshly migrated database: each endpoint
/// is claimed its share, an attempt is recorded as what it was, a 410
/// disables the endpoint until it is enabled, dead deliveries can be sent
/// again, and erasure reaches waiting payloads.
@Suite(.enabled(if: Services.available, Services.skipMessage), .serialized)
struct WebhookDeliveriesTableTests: MigratedDatabaseSuite {
    let migrated: MigratedDatabase

    func row(_ id: String, tenant: String = "t1", endpoint: String = "a", claims: Bool = false) -> WebhookDeliveriesTable.Row {
        let payload = claims ? #"{"id":"\#(id)","data":{"verdict":"verified","claims":"sealed","ages":{}}}"# : #"{"id":"\#(id)","data":{"verdict":"verified"}}"#
        return WebhookDeliveriesTable.Row(tenant: tenant, endpoint: endpoint, webhookID: id, eventID: "e-\(id)", eventType: "veridoc.verification.completed.v1",
                                          payload: payload, hasClaims: claims)
    }

    func state(_ id: String) throws -> (state: String?, attempts: Int64?, payload: String?) {
        let result = try connection.execute("SELECT state, attempts, payload FROM webhook_deliveries WHERE webhook_id = $1", [.text(id)])
        return (result.string(0, "state"), result.int(0, "attempts"), result.string(0, "payload"))
    }

    @Test func eachEndpointIsClaimedItsShareAndOnce() throws {
        try connection.execute(WebhookDeliveriesTable.insert((0..<20).map { row("a\($0)") } + [row("b0", endpoint: "b"), row("c0", tenant: "t2")]))
        // The same event found again changes nothing.
        try connection.execute(WebhookDeliveriesTable.insert([row("a0")]))
        let wants: [WebhookDeliveriesTable.Want] = [(tenant: "t1", endpoint: "a", count: 3), (tenant: "t1", endpoint: "b", count: 3)]
        let first = WebhookDeliveriesTable.claimed(try connection.execute(WebhookDeliveriesTable.claimDue(wants, by: "w1", forSeconds: 60)))
        #expect(first.filter { $0.endpoint == "a" }.count == 3 && first.filter { $0.endpoint == "b" }.count == 1, "\(first.map(\.webhookID))")
        #expect(!first.contains { $0.tenant == "t2" }, "only the endpoints asked for")
        let second = WebhookDeliveriesTable.claimed(try connection.execute(WebhookDeliveriesTable.claimDue(wants, by: "w2", forSeconds: 60)))
        #expect(Set(second.map(\.webhookID)).isDisjoint(with: first.map(\.webhookID)), "a claimed delivery is not claimed again while its claim holds")
        #expect(second.count == 3 && second.allSatisfy { $0.endpoint == "a" })
    }

    @Test func attemptsAreRecordedAsTheyEnded() throws {
        try connection.execute(WebhookDeliveriesTable.insert([row("d"), row("r"), row("x"), row("g")]))
        let claimed = WebhookDeliveriesTable.claimed(try connection.execute(
            WebhookDeliveriesTable.claimDue([(tenant: "t1", endpoint: "a", count: 10)], by: "w", forSeconds: 60)))
        let byID = Dictionary(claimed.map { ($0.webhookID, $0) }) { $1 }
        let d = try #require(byID["d"]), r = try #require(byID["r"]), x = try #require(byID["x"]), g = try #require(byID["g"])
        // Another worker's record, or this one's for an attempt count the row no longer has, changes nothing.
        #expect(try connection.execute(WebhookDeliveriesTable.record(d, by: "other", .dead(status: 500, error: "http_status"))).affectedRows == 0)
        try connection.execute(WebhookDeliveriesTable.record(d, by: "w", .delivered(status: 204)))
        try connection.execute(WebhookDeliveriesTable.record(r, by: "w", .retry(afterSeconds: 3600, status: 503, error: "http_status")))
        try connection.execute(WebhookDeliveriesTable.record(x, by: "w", .dead(status: nil, error: "timeout")))
        try connection.execute(WebhookDeliveriesTable.record(g, by: "w", .endpointGone))
        #expect(try state("d") == ("delivered", 1, nil), "a delivered row keeps no payload")
        // The same record again (a commit whose answer was lost) changes nothing.
        #expect(try connection.execute(WebhookDeliveriesTable.record(r, by: "w", .retry(afterSeconds: 1, status: 503, error: "http_status"))).affectedRows == 0)
        #expect(try connection.execute(WebhookDeliveriesTable.record(d, by: "w", .dead(status: 500, error: "http_status"))).affectedRows == 0)
        #expect(try state("r").state == "pending" && state("r").attempts == 1)
        #expect(try state("x").state == "dead" && state("x").payload != nil)
        #expect(try state("g") .state == "pending" && state("g").attempts == 0, "a 410 is not counted against the delivery")
        #expect(try connection.execute(WebhookDeliveriesTable.disabledEndpoints).rowCount == 1)
        // Not due (r waits an hour), claimed by nobody but not due either: nothing to claim.
        let again = try connection.execute(WebhookDeliveriesTable.claimDue([(tenant: "t1", endpoint: "a", count: 10)], by: "w", forSeconds: 60))
        #expect(WebhookDeliveriesTable.claimed(again).map(\.webhookID) == ["g"], "only g is due")

        try connection.execute(WebhookDeliveriesTable.enable(tenant: "t1", endpoint: "a"))
        #expect(try connection.execute(WebhookDeliveriesTable.disabledEndpoints).rowCount == 0)
        let redelivered = try connection.execute(WebhookDeliveriesTable.redeliverDead(tenant: "t1", webhookID: nil))
        #expect(redelivered.rowCount == 1 && redelivered.string(0, "webhook_id") == "x")
        #expect(try state("x") == ("pending", 0, row("x").payload))
        #expect(try connection.execute(WebhookDeliveriesTable.list(state: "delivered", tenant: nil, limit: 10)).rowCount == 1)
        // Pending too long (its endpoint gone from the config, or never enabled again): dead as expired.
        #expect(try connection.execute(WebhookDeliveriesTable.expire(olderThanSeconds: 3600, limit: 10)).affectedRows == 0)
        try connection.execute("UPDATE webhook_deliveries SET created_at = now() - interval '2 hours' WHERE webhook_id = 'g'")
        #expect(try connection.execute(WebhookDeliveriesTable.expire(olderThanSeconds: 3600, limit: 10)).affectedRows == 1)
        #expect(try state("g").state == "dead")
        try connection.execute("UPDATE webhook_deliveries SET finished_at = now() - interval '3 hours' WHERE webhook_id = 'd'")
        #expect(try connection.execute(WebhookDeliveriesTable.deleteFinished(olderThanHours: 4, limit: 10)).affectedRows == 0)
        #expect(try connection.execute(WebhookDeliveriesTable.deleteFinished(olderThanHours: 2, limit: 10)).affectedRows == 1)
    }

    @Test func erasureStripsWaitingClaims() throws {
        try connection.execute(WebhookDeliveriesTable.insert([row("s", claims: true), row("o", tenant: "t2", claims: true)]))
        #expect(try connection.execute(WebhookDeliveriesTable.stripClaims(matching: .request(eventID: "e-s"), limit: 10)).affectedRows == 1)
        let stripped = try state("s").payload ?? ""
        #expect(!stripped.contains("claims") && !stripped.contains("ages") && stripped.contains("verified"), "\(stripped)")
        #expect(try state("o").payload?.contains("claims") == true, "another request's delivery is untouched")
        #expect(try connection.execute(WebhookDeliveriesTable.countPending).int(0, "count") == 2)

        // A NUL a hostile event put in a quoted string arrives as the escape \u0000, which jsonb refuses.
        let hostile = WebhookDeliveriesTable.Row(tenant: "t3", endpoint: "a", webhookID: "n", eventID: "e-n", eventType: "veridoc.verification.completed.v1",
                                                 payload: #"{"id":"n\u0000","data":{"verdict":"rejected","claims":"sealed","ages":{}}}"#, hasClaims: true)
        try connection.execute(WebhookDeliveriesTable.insert([hostile]))
        #expect(try connection.execute(WebhookDeliveriesTable.stripClaims(matching: .tenant("t3"), limit: 10)).affectedRows == 1)
        #expect(try state("n").payload?.contains("claims") == false)
    }

    /// Two workers' claim passes share an endpoint's limits: never more
    /// under way than its maxConcurrency between them, a delivery recorded
    /// makes room, and between them no more starts than the bucket allows
    /// (its burst, one second's worth, and its rate for the time that passed).
    @Test func endpointLimitsHoldAcrossWorkers() throws {
        try connection.execute(WebhookDeliveriesTable.insert((0..<10).map { row("c\($0)") } + (0..<10).map { row("r\($0)", endpoint: "b") }))
        func want(_ endpoint: String, concurrency: Int, perSecond: Int) -> WebhookEndpointLimits.Want {
            .init(tenant: "t1", endpoint: endpoint, count: 10, maxConcurrency: concurrency, maxPerSecond: perSecond)
        }
        let concurrent = want("a", concurrency: 3, perSecond: 1_000)
        let first = try WebhookEndpointLimits.claim([concurrent], idle: 10, by: "w1", forSeconds: 60, on: connection)
        #expect(first.count == 3)
        #expect(try WebhookEndpointLimits.claim([concurrent], idle: 10, by: "w2", forSeconds: 60, on: connection).isEmpty, "w1 holds the endpoint's three")
        try connection.execute(WebhookDeliveriesTable.record(first[0], by: "w1", .delivered(status: 200)))
        #expect(try WebhookEndpointLimits.claim([concurrent], idle: 10, by: "w2", forSeconds: 60, on: connection).count == 1, "one recorded, one more")

        let rated = want("b", concurrency: 10, perSecond: 2)
        let started = Date()
        let one = try WebhookEndpointLimits.claim([rated], idle: 10, by: "w1", forSeconds: 60, on: connection).count
        let two = try WebhookEndpointLimits.claim([rated], idle: 10, by: "w2", forSeconds: 60, on: connection).count
        let elapsed = Date().timeIntervalSince(started)
        #expect(one == 2, "a full bucket: one second's worth")
        #expect(Double(one + two) <= 2 + 2 * elapsed, "no more than the bucket allows: \(one) + \(two) in \(elapsed) s")
        #expect(try WebhookEndpointLimits.claim([rated], idle: 0, by: "w3", forSeconds: 60, on: connection).isEmpty, "no idle thread, no claim")
    }
}
