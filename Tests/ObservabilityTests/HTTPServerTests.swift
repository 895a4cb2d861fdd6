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
        let server = try HTTPServer(port: 0, loopbackOnly: true, registry: registry) { readiness.value }
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
