import Foundation
import Testing
import TestSupport
import HTTPService
@testable import Observability

/// Unchecked Sendable: guarded by `lock`.
private final class Switch: @unchecked Sendable {
    private let lock = NSLock()
    private var state = HTTPServer.Readiness(ready: false, reason: "no partitions assigned")
    var value: HTTPServer.Readiness {
        get { lock.withLock { state } }
        set { lock.withLock { state = newValue } }
    }
}

@Suite(.serialized) struct HTTPServerTests {
    private func makeServer() throws -> (HTTPServer, MetricsRegistry, Switch) {
        let registry = MetricsRegistry()
        let readiness = Switch()
        // Sixteen clients on one address at once: the per-address cap (ProbeListenerHoldsTests) is set above them here.
        var limits = HTTPServer.defaultLimits
        limits.connectionsPerAddress = 64
        let server = try HTTPServer(port: 0, loopbackOnly: true, limits: limits, registry: registry) { readiness.value }
        return (server, registry, readiness)
    }

    @Test func servesMetricsHealthAndReadiness() throws {
        let (server, registry, readiness) = try makeServer()
        defer { server.stop() }
        #expect(server.port > 0)
        let counter = registry.counter("veridoc_test_total", help: "t", labels: ["verdict"])
        counter.increment(by: 3, "verified")

        let metrics = try RawHTTP.request("GET", "/metrics", port: server.port)
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let parsed = try PrometheusText(metrics.body)
        #expect(parsed.values("veridoc_test_total") == [.init(name: "veridoc_test_total", labels: ["verdict": "verified"], value: 3)])

        let health = try RawHTTP.request("GET", "/healthz", port: server.port)
        #expect(health.status == 200 && health.body == "ok\n")

        let notReady = try RawHTTP.request("GET", "/readyz", port: server.port)
        #expect(notReady.status == 503 && notReady.body == "no partitions assigned\n")
        readiness.value = .ready
        let ready = try RawHTTP.request("GET", "/readyz", port: server.port)
        #expect(ready.status == 200 && ready.body == "ready\n")

        // A query string does not change the route.
        #expect(try RawHTTP.request("GET", "/healthz?verbose=1", port: server.port).status == 200)
    }

    @Test func unknownPathsAre404AndOtherMethods405() throws {
        let (server, _, _) = try makeServer()
        defer { server.stop() }
        #expect(try RawHTTP.request("GET", "/", port: server.port).status == 404)
        #expect(try RawHTTP.request("GET", "/metrics/extra", port: server.port).status == 404)
        let post = try RawHTTP.request("POST", "/metrics", port: server.port)
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        #expect(try RawHTTP.request("DELETE", "/readyz", port: server.port).status == 405)
        let head = try RawHTTP.request("HEAD", "/healthz", port: server.port)
        #expect(head.status == 200 && head.body.isEmpty)
    }

    @Test func concurrentRequestsAllSucceed() async throws {
        let (server, registry, _) = try makeServer()
        defer { server.stop() }
        let histogram = registry.histogram("veridoc_test_seconds", help: "t", buckets: Histogram.secondsBuckets)
        let port = server.port
        let statuses = await withTaskGroup(of: [Int].self) { group in
            for client in 0..<16 {
                group.addTask {
                    var statuses: [Int] = []
                    for round in 0..<10 {
                        histogram.observe(Double(round) / 10)
                        let path = ["/metrics", "/healthz", "/readyz"][(client + round) % 3]
                        statuses.append((try? RawHTTP.request("GET", path, port: port))?.status ?? -1)
                    }
                    return statuses
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(statuses.count == 160)
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 }, "\(statuses.filter { $0 != 200 && $0 != 503 })")
        #expect(try PrometheusText(RawHTTP.request("GET", "/metrics", port: port).body).values("veridoc_test_seconds_count").first?.value == 160)
    }

    @Test func stopReleasesThePortAndABusyPortFails() throws {
        let (server, registry, _) = try makeServer()
        let port = server.port
        #expect(throws: HTTPServiceError.self) { try HTTPServer(port: port, loopbackOnly: true, registry: registry) { .ready } }
        server.stop()
        server.stop()  // idempotent
        #expect(throws: (any Error).self) { try RawHTTP.request("GET", "/healthz", port: port) }
        let again = try HTTPServer(port: port, loopbackOnly: true, registry: registry) { .ready }
        #expect(again.port == port)
        #expect(try RawHTTP.request("GET", "/healthz", port: port).status == 200)
        again.stop()
    }
}

/// The probe listener against clients that hold connections without
/// finishing a request: the orchestrator restarts a worker whose /healthz
/// does not answer, so strangers must not be able to fill this port.
@Suite struct ProbeListenerHoldsTests {
    private func server(_ limits: HTTPDaemon.Limits) throws -> HTTPServer {
        try HTTPServer(port: 0, loopbackOnly: true, limits: limits, registry: MetricsRegistry()) { .ready }
    }

    /// More slow clients than the listener has connections: each new
    /// connection evicts the one reading the longest, so a probe that sends
    /// its request at once still gets in and is answered.
    @Test func healthzAnswersWhileSlowClientsHoldMoreThanEveryConnection() throws {
        let server = try server(HTTPDaemon.Limits(connectionLimit: 16, idleTimeoutSeconds: 600, connectionsPerAddress: 0,
                                                  headerTimeoutSeconds: 600, bodyTimeoutSeconds: 600))
        defer { server.stop() }
        var held: [RawSocket] = []
        for _ in 0..<24 {
            let socket = try RawSocket(port: server.port)
            socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            held.append(socket)
        }
        // The flood's last connections may meet the hard limit while evicted sockets close; once they have, a probe gets in.
        #expect(eventually(30, every: 0.05) { (try? RawHTTP.request("GET", "/healthz", port: server.port, timeout: 2))?.status == 200 })
        for _ in 0..<3 {
            let health = try RawHTTP.request("GET", "/healthz", port: server.port, timeout: 5)
            #expect(health.status == 200 && health.body == "ok\n")
        }
        #expect(server.connectionCounts.evicted > 0, "room was made by eviction: \(server.connectionCounts)")
        #expect(held.count == 24)
    }

    /// A client that sends a header byte at a time, faster than the idle
    /// timeout, is still cut off when its headers are not in by the deadline.
    @Test func headersDribbledByteByByteAreCutOffAtTheHeaderDeadline() throws {
        let server = try server(HTTPDaemon.Limits(connectionLimit: 16, idleTimeoutSeconds: 600, connectionsPerAddress: 0,
                                                  headerTimeoutSeconds: 1, bodyTimeoutSeconds: 600))
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        #expect(socket.dribbleUntilClosed(), "the server still reads the headers after 15 s")
        #expect(server.connectionCounts.timedOut >= 1)
        #expect(try RawHTTP.request("GET", "/healthz", port: server.port).status == 200)
    }

    /// A body dribbled a byte at a time is cut off at the body deadline, as headers are at theirs.
    @Test func aBodyDribbledByteByByteIsCutOffAtTheBodyDeadline() throws {
        let daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(maxBodyBytes: 1_000, connectionLimit: 16, idleTimeoutSeconds: 600,
                                                                                         headerTimeoutSeconds: 600, bodyTimeoutSeconds: 1)) { _ in .text(200, "ok\n") }
        defer { daemon.stop() }
        let socket = try RawSocket(port: daemon.port)
        socket.send("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n")
        #expect(socket.dribbleUntilClosed(), "the server still reads the body after 15 s")
        #expect(daemon.connectionCounts.timedOut >= 1)
    }

    /// One address holds at most `connectionsPerAddress` connections; more are closed at once.
    @Test func oneAddressHoldsAtMostItsCap() throws {
        let server = try server(HTTPDaemon.Limits(connectionLimit: 32, connectionsPerAddress: 3, headerTimeoutSeconds: 600, bodyTimeoutSeconds: 600))
        defer { server.stop() }
        let cap = try RawSocket.perAddressCap(3, port: server.port)
        #expect(cap.oneMoreClosed, "a fourth connection from the same address was kept")
        #expect(cap.answersAgain)
    }

    /// Requests two readers could frame or route differently are 400 before any route.
    @Test func ambiguousRequestsAre400() throws {
        let server = try server(HTTPServer.defaultLimits)
        defer { server.stop() }
        for (name, request) in StrictHTTPCases.all(path: "/healthz") {
            let response = try RawHTTP.exchange(Array(request.utf8), port: server.port)
            #expect(response.status == 400, "\(name): \(response.status)")
        }
        #expect(try RawHTTP.request("GET", "/healthz", port: server.port).status == 200)
    }
}

/// More connections than select(2) can watch (descriptors past 1023).
@Suite struct ManyConnectionsTests {
    @Test func connectionsPastDescriptor1023AreServed() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_cur >= 2_600, "this test needs 2,600 open files (ulimit -n)")
        let server = try HTTPServer(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(connectionLimit: 1_400, idleTimeoutSeconds: 600,
                                                                                         headerTimeoutSeconds: 600, bodyTimeoutSeconds: 600),
                                    registry: MetricsRegistry()) { .ready }
        defer { server.stop() }
        // Both ends of each connection are in this process: 1,100 of them take the server's descriptors past 1023.
        let held = try (0..<1_100).map { _ in try RawSocket(port: server.port) }
        for socket in held { socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
        #expect(eventually(60) { server.connectionCounts.open >= 1_100 }, "\(server.connectionCounts)")
        #expect(try RawHTTP.request("GET", "/healthz", port: server.port, timeout: 10).status == 200)
    }
}
