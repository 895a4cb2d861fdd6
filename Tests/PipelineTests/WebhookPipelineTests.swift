import Foundation
import Postgres
import Testing
import TestIssuer
import TestSupport

/// Webhooks through a real worker: each outcome is recorded for delivery in
/// its result's transaction and POSTed, signed, to a receiver Veridoc did not
/// write (scripts/webhook-receiver, standardwebhooks from PyPI), exactly as
/// it went to the outcome topic; a failed attempt is retried with the same
/// `webhook-id`; a 410 disables the endpoint until `veridoc webhooks enable`.
@Suite(.enabled(if: Services.available, Services.skipMessage), .enabled(if: WebhookReceiver.available, Comment(rawValue: WebhookReceiver.skipMessage)))
struct WebhookPipelineTests {
    /// A receiver answering `answers` in turn (then 200), and a pipeline whose
    /// tenant has it as its one endpoint under a new secret. The caller stops
    /// the receiver.
    static func receiverAndPipeline(answers: [String]) throws -> (WebhookReceiver, PipelineFixture) {
        let secret = WebhookReceiver.newSecret().text
        let receiver = try WebhookReceiver(secrets: [secret], answers: answers)
        do {
            let fixture = try PipelineFixture(
                tenantSettings: ["webhooks": [["id": "primary", "url": receiver.url, "secrets": ["hook.whsec"]]]],
                settings: ["webhooks": ["allowInsecureTargets": true, "retrySchedule": [1, 1, 1], "timeoutSeconds": 5, "connectTimeoutSeconds": 2]])
            guard FileManager.default.createFile(atPath: fixture.directory.appendingPathComponent("hook.whsec").path, contents: Data((secret + "\n").utf8),
                                                 attributes: [.posixPermissions: 0o600]) else { throw TestFailure("cannot write hook.whsec") }
            return (receiver, fixture)
        } catch {
            receiver.stop()
            throw error
        }
    }

    @Test func everyOutcomeIsDeliveredSignedAsPublishedAndRetriedUnderItsID() throws {
        let (receiver, fixture) = try Self.receiverAndPipeline(answers: ["500"])
        defer { receiver.stop() }
        let worker = try fixture.startWorker()
        let events = try (0..<3).map { _ in try fixture.factory.event(.appleWalletApp) }
        try fixture.produce(events.enumerated().map { ("k\($0.offset)", $0.element.json()) })
        let published = try fixture.outcomeEvents(expected: 3)
        #expect(published.count == 3)
        let delivered = receiver.requests(within: 60) { requests in Set(requests.filter { $0.answer == "200" }.map(\.id)).count == 3 }
        #expect(worker.terminate() == 0)

        #expect(delivered.allSatisfy { $0.verified }, "every delivery verifies under the endpoint's secret")
        #expect(delivered.allSatisfy { $0.contentType.hasPrefix("application/cloudevents+json") })
        #expect(Set(delivered.map(\.id)) == Set(published.compactMap { $0["id"] as? String }), "webhook-id is the CloudEvent id")
        // The first request to arrive got the 500 (the receiver logs each once answered, so concurrent ones
        // may be logged in another order); that delivery came again, under the same id, with the same body.
        #expect(delivered.filter { $0.answer == "500" }.count == 1, "\(delivered.map(\.answer))")
        let first = try #require(delivered.first { $0.answer == "500" })
        let again = delivered.filter { $0.id == first.id }
        #expect(again.count == 2 && again.map(\.body) == [first.body, first.body] && again.map(\.answer) == ["500", "200"])
        for request in delivered {
            let body = try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? NSDictionary
            let topic = published.first { $0["id"] as? String == request.id }.map { $0 as NSDictionary }
            #expect(body != nil && body == topic, "the body is the event on the outcome topic")
        }
        let connection = try PostgresConnection(connectionString: fixture.database.connectionString)
        defer { connection.close() }
        let rows = try connection.execute("SELECT webhook_id, state, attempts, payload FROM webhook_deliveries ORDER BY attempts DESC")
        #expect(rows.rowCount == 3)
        #expect((0..<rows.rowCount).allSatisfy { rows.string($0, "state") == "delivered" && rows.string($0, "payload") == nil })
        #expect(rows.int(0, "attempts") == 2 && rows.string(0, "webhook_id") == first.id)
    }

    @Test func aGoneEndpointWaitsUntilAnOperatorEnablesIt() throws {
        let (receiver, fixture) = try Self.receiverAndPipeline(answers: ["410"])
        defer { receiver.stop() }
        let worker = try fixture.startWorker()
        try fixture.produce([("k1", try fixture.factory.event(.appleWalletApp).json())])
        #expect(receiver.requests(within: 60) { !$0.isEmpty }.first?.answer == "410")
        let connection = try PostgresConnection(connectionString: fixture.database.connectionString)
        defer { connection.close() }
        #expect(eventually(60) { (try? connection.execute("SELECT count(*) AS count FROM webhook_endpoints").int(0, "count")) == 1 })
        try fixture.produce([("k2", try fixture.factory.event(.appleWalletApp).json())])
        _ = try fixture.outcomeEvents(expected: 2)
        // Both wait: nothing more reaches the receiver while the endpoint is disabled.
        #expect(eventually(60) { (try? connection.execute("SELECT count(*) AS count FROM webhook_deliveries WHERE state = 'pending'").int(0, "count")) == 2 })
        #expect(receiver.requests().count == 1)
        let listed = try Subprocess.run(Binaries.veridoc, ["webhooks", "list", "--config", fixture.config.path, "--state", "pending"])
        #expect(listed.status == 0 && listed.output.split(separator: "\n").count == 3 && listed.output.contains("endpoint_gone"), "\(listed.output)")
        let enabled = try Subprocess.run(Binaries.veridoc, ["webhooks", "enable", "--config", fixture.config.path, "--tenant", fixture.factory.merchant.tenantID,
                                                            "--endpoint", "primary"], mergingStandardError: true)
        #expect(enabled.status == 0, "\(enabled.output)")
        let after = receiver.requests(within: 60) { $0.filter { $0.answer == "200" }.count == 2 }
        #expect(after.filter { $0.answer == "200" }.count == 2 && after.allSatisfy { $0.verified })
        #expect(worker.terminate() == 0)
    }

    /// A receiver that never answers in time holds only its endpoint's share
    /// of the sending threads (`maxConcurrency`, for the deployment: two
    /// workers here), so the tenant's other endpoint gets every delivery
    /// meanwhile. The slow endpoint's attempts under way are its claimed
    /// rows, sampled while waiting: never more than its share between both
    /// workers, and at least one (it was tried).
    @Test func aSlowEndpointHoldsOnlyItsShareOfTheThreads() throws {
        let secret = WebhookReceiver.newSecret().text
        let slow = try WebhookReceiver(secrets: [secret], answers: Array(repeating: "slow:60", count: 100))
        defer { slow.stop() }
        let fast = try WebhookReceiver(secrets: [secret])
        defer { fast.stop() }
        let fixture = try PipelineFixture(
            tenantSettings: ["webhooks": [["id": "slow", "url": slow.url, "secrets": ["hook.whsec"], "maxConcurrency": 2],
                                          ["id": "fast", "url": fast.url, "secrets": ["hook.whsec"]]]],
            settings: ["webhooks": ["allowInsecureTargets": true, "retrySchedule": [1, 1, 1, 1, 1], "timeoutSeconds": 5, "connectTimeoutSeconds": 2,
                                    "deliveryThreads": 3]])
        guard FileManager.default.createFile(atPath: fixture.directory.appendingPathComponent("hook.whsec").path, contents: Data((secret + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else { throw TestFailure("cannot write hook.whsec") }
        let connection = try PostgresConnection(connectionString: fixture.database.connectionString)
        defer { connection.close() }
        let worker = try fixture.startWorker()
        let second = try fixture.startWorker("second")
        try fixture.produce(try (0..<12).map { ("k\($0)", try fixture.factory.event(.appleWalletApp).json()) })
        var slowUnderWay: [Int] = []
        let delivered = fast.requests(within: 120) { requests in
            let claimed = try? connection.execute("""
                SELECT count(*) AS count FROM webhook_deliveries WHERE endpoint = 'slow' AND state = 'pending' AND claimed_until > now()
                """).int(0, "count")
            if let claimed { slowUnderWay.append(Int(claimed)) }
            return Set(requests.filter { $0.answer == "200" }.map(\.id)).count == 12
        }
        #expect(Set(delivered.filter { $0.answer == "200" }.map(\.id)).count == 12, "every delivery to the fast endpoint arrived")
        #expect(slowUnderWay.allSatisfy { $0 <= 2 }, "the slow endpoint never held more than its maxConcurrency: \(slowUnderWay)")
        let stillSlow = eventually(60) {
            (try? connection.execute("SELECT count(*) AS count FROM webhook_deliveries WHERE endpoint = 'slow' AND claimed_until > now()").int(0, "count")) ?? 0 > 0
        }
        #expect(stillSlow, "the slow endpoint was tried")
        #expect(try connection.execute("SELECT count(*) AS count FROM webhook_deliveries WHERE endpoint = 'slow' AND state = 'delivered'").int(0, "count") == 0)
        #expect(worker.terminate() == 0 && second.terminate() == 0)
    }
}
