import Foundation
import Testing
import TestSupport
@testable import SessionAPI

/// `veridoc serve`'s HTTP front against clients that hold connections:
/// slow clients (slowloris) and one tenant's long polls must leave room for
/// other tenants and for the probes; requests two readers could frame
/// differently are 400. Small limits in the config show at test scale what
/// the bench shows at 1,000 connections.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct HTTPFrontTests {
    static let appSession = #"{"flow":"apple-wallet-app","merchantId":"\#(ServeFixture.merchantID)","ttlSeconds":120}"#

    func call(_ fixture: ServeFixture, _ method: String, _ path: String, _ body: String? = nil, key: String, timeout: TimeInterval = 10) throws -> RawHTTP.Response {
        var headers = [("Authorization", "Bearer \(key)")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try RawHTTP.request(method, path, port: fixture.port, headers: headers, body: Array((body ?? "").utf8), timeout: timeout)
    }

    func waitingPolls(_ fixture: ServeFixture) -> Double? {
        (try? PrometheusText(RawHTTP.request("GET", "/metrics", port: fixture.metricsPort).body))?.values("veridoc_api_long_polls_waiting").first?.value
    }

    /// 24 connections (3 kept in reserve), acme's long polls capped at 2:
    /// acme's third poll is 429 with Retry-After, and with 40 slow clients
    /// holding more than every connection, initech still creates a session
    /// and the probes answer.
    @Test func slowClientsAndOneTenantsLongPollsLeaveRoomForOthers() throws {
        let fixture = try ServeFixture(burst: 1_000, serveSettings: [
            "maxConnections": 24, "maxConnectionsPerAddress": 1_000, "maxWaitingPollsPerTenant": 2, "headerTimeoutSeconds": 600,
        ])
        let created = try call(fixture, "POST", "/v1/sessions", Self.appSession, key: ServeFixture.acmeKey)
        #expect(created.status == 201, "\(created.body)")
        let id = try #require((try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any])?["id"] as? String)
        let port = fixture.port
        // Two polls that wait (the session stays pending); they end when serve does.
        for _ in 0..<2 {
            Thread.detachNewThread {
                _ = try? RawHTTP.request("GET", "/v1/sessions/\(id)?wait=30", port: port, headers: [("Authorization", "Bearer \(ServeFixture.acmeKey)")], timeout: 60)
            }
        }
        #expect(eventually(30) { waitingPolls(fixture) == 2 }, "two polls waiting")
        let third = try call(fixture, "GET", "/v1/sessions/\(id)?wait=30", key: ServeFixture.acmeKey, timeout: 5)
        #expect(third.status == 429)
        #expect(third.headers["retry-after"] == "1")
        #expect(try fixture.refusal(third).code == "too_many_requests")
        #expect(try call(fixture, "GET", "/v1/sessions/\(id)", key: ServeFixture.acmeKey, timeout: 5).status == 200, "a poll that does not wait is not capped")

        var slow: [RawSocket] = []
        for _ in 0..<40 {
            let socket = try RawSocket(port: port)
            socket.send("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(socket)
        }
        // The flood's last connections may meet the hard limit while evicted sockets close; once they have, a probe gets in.
        #expect(eventually(30, every: 0.05) { (try? RawHTTP.request("GET", "/healthz", port: port, timeout: 2))?.status == 200 })
        for _ in 0..<3 {
            let other = try call(fixture, "POST", "/v1/sessions", Self.appSession, key: ServeFixture.initechKey, timeout: 5)
            #expect(other.status == 201, "\(other.body)")
            #expect(try RawHTTP.request("GET", "/healthz", port: port, timeout: 5).status == 200)
            #expect(try RawHTTP.request("GET", "/readyz", port: port, timeout: 5).status == 200)
        }
        #expect(waitingPolls(fixture) == 2, "the held polls were not what made room")
        #expect(slow.count == 40)
    }

    /// `serve.maxConnectionsPerAddress`: a fifth connection from one address is closed at once.
    @Test func oneAddressHoldsAtMostItsCap() throws {
        let fixture = try ServeFixture(burst: 1_000, serveSettings: ["maxConnectionsPerAddress": 4, "headerTimeoutSeconds": 600])
        let cap = try RawSocket.perAddressCap(4, port: fixture.port)
        #expect(cap.oneMoreClosed, "a fifth connection from one address was kept")
        #expect(cap.answersAgain)
    }

    /// Duplicate or conflicting framing, a repeated Authorization, NUL and dot segments: 400 malformed_request, before any route or key.
    /// And `serve.headerTimeoutSeconds`: headers sent a byte at a time are cut off at the deadline.
    @Test func ambiguousRequestsAre400AndSlowHeadersAreCutOff() throws {
        let fixture = try ServeFixture(burst: 1_000, serveSettings: ["headerTimeoutSeconds": 1])
        let slow = try RawSocket(port: fixture.port)
        slow.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        #expect(slow.dribbleUntilClosed(), "serve still reads the headers after 15 s")

        for (name, request) in StrictHTTPCases.all(path: "/v1/sessions", authorization: "Bearer \(ServeFixture.acmeKey)") {
            let response = try RawHTTP.exchange(Array(request.utf8), port: fixture.port)
            #expect(response.status == 400, "\(name): \(response.status) \(response.body)")
            if response.status == 400 { #expect(try fixture.refusal(response).code == "malformed_request", "\(name)") }
        }
        #expect(try call(fixture, "POST", "/v1/sessions", Self.appSession, key: ServeFixture.acmeKey).status == 201)
    }
}
