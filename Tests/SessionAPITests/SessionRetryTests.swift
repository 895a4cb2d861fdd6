import Foundation
import Kafka
import Storage
import Synchronization
import TestSupport
import Testing

/// A creation retried with its Idempotency-Key, and sessions found by the
/// integrator's reference, over real HTTP against PostgreSQL.
extension SessionRouteTests {
    func create(_ body: String, key idempotencyKey: String?, apiKey: String = ServeFixture.acmeKey) throws -> (status: UInt32, object: [String: Any], response: RawHTTP.Response) {
        try Self.create(body, key: idempotencyKey, apiKey: apiKey, port: port)
    }

    static func create(_ body: String, key idempotencyKey: String?, apiKey: String = ServeFixture.acmeKey,
                       port: Int) throws -> (status: UInt32, object: [String: Any], response: RawHTTP.Response) {
        var headers = [("Authorization", "Bearer \(apiKey)"), ("Content-Type", "application/json")]
        if let idempotencyKey { headers.append(("Idempotency-Key", idempotencyKey)) }
        let response = try RawHTTP.request("POST", "/v1/sessions", port: port, headers: headers, body: Array(body.utf8))
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? [:]
        return (UInt32(response.status), object, response)
    }

    func sessions(reference: String, apiKey: String = ServeFixture.acmeKey) throws -> [[String: Any]] {
        let found = try call("GET", "/v1/sessions?reference=\(reference)", key: apiKey)
        #expect(found.status == 200, "\(found.response.body)")
        return try #require(found.object["sessions"] as? [[String: Any]])
    }

    @Test func aRetriedCreationWithItsKeyIsTheSameSessionAndAnotherBodyIsAConflict() throws {
        let reference = "retry-" + UUID().uuidString.lowercased()
        let body = #"{"flow":"apple-wallet-web","origin":"\#(ServeFixture.origin)","requestedElements":\#(Self.elements),"reference":"\#(reference)"}"#
        let key = UUID().uuidString
        let first = try create(body, key: key)
        #expect(first.status == 201 && first.response.headers["idempotent-replayed"] == nil, "\(first.response.body)")
        let again = try create(body, key: key)
        #expect(again.status == 201 && again.response.headers["idempotent-replayed"] == "true", "\(again.response.body)")
        #expect(again.object["id"] as? String == first.object["id"] as? String)
        let firstRequest = try #require(first.object["request"] as? [String: Any])
        let againRequest = try #require(again.object["request"] as? [String: Any])
        let info = { (request: [String: Any]) in (request["data"] as? [String: Any])?["encryptionInfo"] as? String }
        #expect(info(firstRequest) != nil && info(firstRequest) == info(againRequest), "the same EncryptionInfo, so the same nonce")
        // The same key with another body (one byte more) names another creation.
        let conflict = try create(body + " ", key: key)
        #expect(conflict.status == 422 && conflict.object["error"] as? String == "idempotency_conflict", "\(conflict.response.body)")
        // Another tenant's key is another tenant's: the same key makes its own session.
        #expect(try create(#"{"flow":"iso-device-response"}"#, key: key, apiKey: ServeFixture.globexKey).status == 201)
        // Without a key, the same body is a new session each time.
        let unkeyed = try create(body, key: nil)
        #expect(unkeyed.status == 201 && unkeyed.object["id"] as? String != first.object["id"] as? String)
        #expect(try sessions(reference: reference).count == 2)
        let invalid = try create(body, key: "has space")
        #expect(invalid.status == 400 && invalid.object["field"] as? String == "Idempotency-Key", "\(invalid.response.body)")
    }

    /// Retries that race each other still make one session.
    @Test func concurrentRetriesMakeOneSession() throws {
        let reference = "race-" + UUID().uuidString.lowercased()
        let body = #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","reference":"\#(reference)"}"#
        let key = UUID().uuidString
        let ids = Mutex<[String?]>([])
        let port = port
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let answer = try? Self.create(body, key: key, port: port)
            let id = answer?.status == 201 ? answer?.object["id"] as? String : nil
            ids.withLock { $0.append(id) }
        }
        let answered = ids.withLock { $0 }
        #expect(answered.count == 8 && Set(answered).count == 1 && answered.first! != nil, "\(answered)")
        #expect(try sessions(reference: reference).count == 1)
    }

    @Test func sessionsAreFoundByTheirReferenceNewestFirstAndOnlyTheTenants() throws {
        let reference = "order-" + UUID().uuidString.lowercased()
        var ids: [String] = []
        for _ in 0..<3 {
            let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","reference":"\#(reference)"}"#)
            ids.append(try #require(created.object["id"] as? String))
        }
        _ = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","reference":"\#(reference)x"}"#)
        let found = try sessions(reference: reference)
        #expect(found.compactMap { $0["id"] as? String } .sorted() == ids.sorted())
        let created = found.compactMap { $0["createdAt"] as? String }
        #expect(created == created.sorted(by: >), "newest first")
        #expect(found.allSatisfy { $0["reference"] as? String == reference && $0["status"] as? String == "pending" })
        #expect(try sessions(reference: reference, apiKey: ServeFixture.globexKey).isEmpty, "another tenant finds none of them")
        #expect(try call("GET", "/v1/sessions").object["field"] as? String == "reference")
        #expect(try call("HEAD", "/v1/sessions?reference=\(reference)").status == 200)
    }
}

/// One answer a background request left, for the test that waits for it.
private final class AnswerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var answer: RawHTTP.Response?
    func set(_ response: RawHTTP.Response?) { lock.withLock { answer = response } }
    var value: RawHTTP.Response? { lock.withLock { answer } }
}

extension SessionRouteTests {
    /// SIGTERM with a long poll waiting: the poll is answered with the
    /// session as it stands, and serve exits 0 well before the poll's 30 s.
    @Test func sigtermAnswersTheWaitingPollAndExits() throws {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":90}"#)
        let id = try #require(created.object["id"] as? String)
        let box = AnswerBox()
        let port = port
        let poller = Thread {
            box.set(try? RawHTTP.request("GET", "/v1/sessions/\(id)?wait=30", port: port, headers: [("Authorization", "Bearer \(ServeFixture.acmeKey)")],
                                         timeout: 60))
        }
        poller.start()
        let metricsPort = fixture.metricsPort
        #expect(eventually(20) {
            (try? PrometheusText(RawHTTP.request("GET", "/metrics", port: metricsPort).body))?.values("veridoc_api_long_polls_waiting").first?.value == 1
        }, "the poll never started waiting")
        // The poll could wait 30 s: an exit within 15 s is the drain's doing.
        #expect(fixture.serve.terminate(timeout: 15) == 0, "\(fixture.serve.log.suffix(800))")
        #expect(eventually(10) { box.value != nil }, "the waiting poll was never answered")
        let answer = try #require(box.value)
        #expect(answer.status == 200 && answer.body.contains(#""status":"pending""#), "\(answer.status) \(answer.body)")
        #expect(fixture.serve.log.contains("session API stopped"))
    }
}

/// A submit while the broker is away is accepted and its event arrives once
/// the broker is back; a session still processing at its expiry fails, and
/// stays failed whatever comes after.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct SessionEndTests {
    let fixture: ServeFixture

    /// Deliveries fail in 2 s instead of 10, so the submit made while the broker is down answers sooner.
    init() throws { fixture = try ServeFixture(burst: 1_000, kafkaProperties: ["message.timeout.ms": "2000"]) }

    func call(_ method: String, _ path: String, _ body: String? = nil) throws -> (status: UInt32, object: [String: Any], body: String) {
        var headers = [("Authorization", "Bearer \(ServeFixture.acmeKey)")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let response = try RawHTTP.request(method, path, port: fixture.port, headers: headers, body: Array((body ?? "").utf8), timeout: 30)
        return (UInt32(response.status), (try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? [:], response.body)
    }

    func createApp(ttl: Int) throws -> String {
        let created = try call("POST", "/v1/sessions", #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":\#(ttl)}"#)
        return try #require(created.object["id"] as? String, "\(created.body)")
    }

    @Test func aSubmitWhileTheBrokerIsDownIsAcceptedAndDeliveredWhenItIsBack() throws {
        let id = try createApp(ttl: 120)
        try fixture.cluster.setBrokerDown(1)
        let submitted = try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"AAEC"}"#)
        #expect(submitted.status == 202, "\(submitted.body)")
        #expect(try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "processing")
        #expect(try fixture.database.count("SELECT count(*) FROM session_submissions WHERE session_id = '\(id)'") == 1, "kept until the broker has it")
        try fixture.cluster.setBrokerUp(1)
        let events = try TopicReader.read("veridoc.requests", bootstrap: fixture.cluster.bootstrapServers, expected: 1, seconds: 30)
        #expect(events.contains { $0.key.map { String(decoding: $0, as: UTF8.self) } == id }, "the relay sent the event")
        #expect(eventually(20) { (try? fixture.database.count("SELECT count(*) FROM session_submissions WHERE session_id = '\(id)'")) == 0 })
    }

    /// Moves the session's expiry back past the grace a verdict has after
    /// it, as if the time had passed (the test's own session only).
    func expireLongAgo(_ id: String) throws {
        _ = try fixture.database.connect().execute("UPDATE sessions SET expires_at = now() - interval '2 minutes' WHERE id = $1::uuid", [.text(id)])
    }

    @Test func aSessionStillProcessingAtItsExpiryFailsAndStaysFailed() throws {
        let id = try createApp(ttl: 120)
        #expect(try call("POST", "/v1/sessions/\(id)/response", #"{"payload":"AAEC"}"#).status == 202)
        // Within the grace past its expiry, a processing session may still get its verdict: it is not failed.
        _ = try fixture.database.connect().execute("UPDATE sessions SET expires_at = now() - interval '10 seconds' WHERE id = $1::uuid", [.text(id)])
        #expect(try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "processing")
        // No worker here: the verdict never comes.
        try expireLongAgo(id)
        var shown: [String: Any] = [:]
        #expect(try eventually(30) {
            shown = try call("GET", "/v1/sessions/\(id)").object
            return shown["status"] as? String == "failed"
        }, "\(shown)")
        #expect(shown["failureReason"] as? String == "verification_timeout")
        #expect(try fixture.database.count("SELECT count(*) FROM sessions WHERE id = '\(id)' AND status = 'failed' AND completed_at IS NOT NULL") == 1)
        // A verdict that comes after finds the session ended and leaves it so.
        let connection = try fixture.database.connect()
        _ = try connection.execute(SessionsTable.complete([.init(tenant: "acme", id: try #require(UUID(uuidString: id)), status: .verified, outcome: "{}")]))
        #expect(try call("GET", "/v1/sessions/\(id)").object["status"] as? String == "failed")
        // The relay ends sessions nobody reads too.
        let unread = try createApp(ttl: 120)
        #expect(try call("POST", "/v1/sessions/\(unread)/response", #"{"payload":"AAEC"}"#).status == 202)
        try expireLongAgo(unread)
        #expect(eventually(30) {
            (try? fixture.database.count("SELECT count(*) FROM sessions WHERE id = '\(unread)' AND status = 'failed'")) == 1
        })
    }
}

extension SessionEndTests {
    /// The events of a session over real HTTP: each state it reaches once,
    /// numbered, until its end; `Last-Event-ID` skips what the client has;
    /// another tenant's session is 404 before any stream.
    @Test func aSessionsEventsComeOnceEachUntilItsEnd() throws {
        func events(_ id: String, lastEventID: String? = nil) throws -> (response: RawHTTP.Response, ids: [Substring]) {
            var headers = [("Authorization", "Bearer \(ServeFixture.acmeKey)")]
            if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
            let response = try RawHTTP.request("GET", "/v1/sessions/\(id)/events", port: fixture.port, headers: headers, timeout: 60)
            return (response, response.body.split(separator: "\n").filter { $0.hasPrefix("id: ") })
        }
        // The stream ends by itself when the session expires, so reading it to its end is the wait.
        let id = try createApp(ttl: 3)
        let stream = try events(id)
        #expect(stream.response.status == 200 && stream.response.headers["content-type"] == "text/event-stream", "\(stream.response.headers)")
        #expect(stream.ids == ["id: 1", "id: 3"], "\(stream.response.body)")
        #expect(stream.response.body.contains(#""status":"pending""#) && stream.response.body.contains(#""status":"expired""#))
        #expect(stream.response.body.components(separatedBy: "event: session").count - 1 == 2)
        // A client that has the end (an automatic reconnect) gets nothing more, and the stream closes at once.
        let reconnected = try events(id, lastEventID: "3")
        #expect(reconnected.response.status == 200 && reconnected.ids.isEmpty && !reconnected.response.body.contains("heartbeat"), "\(reconnected.response.body)")
        // A session that took a response and got no verdict: processing, then, its grace past, failed.
        let processing = try createApp(ttl: 120)
        #expect(try call("POST", "/v1/sessions/\(processing)/response", #"{"payload":"AAEC"}"#).status == 202)
        try expireLongAgo(processing)
        let failed = try events(processing, lastEventID: "1")
        #expect(failed.ids == ["id: 3"] && failed.response.body.contains(#""status":"failed""#), "\(failed.response.body)")
        let foreign = try RawHTTP.request("GET", "/v1/sessions/\(id)/events", port: fixture.port,
                                          headers: [("Authorization", "Bearer \(ServeFixture.globexKey)")])
        #expect(foreign.status == 404)
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body)
        #expect(metrics.values("veridoc_api_event_streams_open").first?.value == 0, "the streams left nothing open")
    }
}
