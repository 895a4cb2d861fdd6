import Foundation
import HTTPService
import Observability
@testable import SessionAPI
import Testing
import TestSupport

/// Every answer carries a request id, the client's when it is a plain token,
/// and the access log has one line a request that names it, the route and
/// the tenant, never the path, the query, the body or the key.
@Suite struct AccessLogTests {
    static let apiKey = "vdk_access-log-key"

    static func api(_ lines: LogLines, registry: MetricsRegistry = MetricsRegistry()) throws -> SessionAPI {
        let tenants = try WebReaderRequiredTests.load(#"{"id": "acme", "merchantIds": ["m"], "teamId": "T", "trustAnchors": ["iaca.pem"], "#
                                                      + #""apiKeys": ["\#(APIKeyring.setting(forKey: apiKey))"]}"#)
        return SessionAPI(tenants: tenants, rateLimit: (100, 100), registry: registry, accessLog: Logger(minimum: .info, sink: { lines.append($0) }))
    }

    @Test func theRequestIDIsTheClientsWhenPlainAndFreshOtherwise() {
        #expect(RequestID.accept("req-42_a.b:c") == "req-42_a.b:c")
        for refused in [nil, "", "has space", "quote\"", "ünï", "a/b", "mail@example.com", String(repeating: "a", count: 129)] {
            let id = RequestID.accept(refused)
            #expect(id != refused && id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }, "\(String(describing: refused))")
        }
        #expect(RequestID.generate() != RequestID.generate())
    }

    @Test func oneLineARequestNamingItsIDRouteAndTenant() throws {
        let lines = LogLines()
        let api = try Self.api(lines)
        let session = "0b6f3c1e-2f1a-4e7b-9c7d-123456789abc"
        let secretBody = #"{"flow":"apple-wallet-app","merchantId":"m","reference":"order-secret-7"}"#
        let answers = [
            api.handle(HTTPRequest(method: "POST", path: "/v1/sessions", headers: ["Authorization": "Bearer \(Self.apiKey)", "Content-Type": "application/json",
                                                                             "X-Request-Id": "client-id-1"], body: Array(secretBody.utf8))),
            api.handle(HTTPRequest(method: "GET", path: "/v1/sessions/\(session)", query: ["wait": "5"], headers: ["X-Request-Id": "bad id"])),
            api.handle(HTTPRequest(method: "BREW", path: "/private/\(session)")),
            api.handle(HTTPRequest(method: "GET", path: "/healthz")),
        ]
        let logged = lines.objects
        #expect(logged.count == answers.count)
        for (answer, line) in zip(answers, logged) {
            let echoed = answer.headers.first { $0.0 == "X-Request-Id" }?.1
            #expect(echoed != nil && line["requestId"] as? String == echoed)
            #expect(line["message"] as? String == "request" && line["status"] as? String == String(answer.status))
            #expect(Double(line["ms"] as? String ?? "") != nil)
        }
        #expect(answers[0].headers.contains { $0 == ("X-Request-Id", "client-id-1") })
        // No database here: the session route gets past the key and answers 503.
        #expect(logged[0]["route"] as? String == "sessions" && logged[0]["tenant"] as? String == "acme" && logged[0]["method"] as? String == "POST")
        #expect(logged[1]["route"] as? String == "session" && logged[1]["tenant"] == nil, "no key, no tenant")
        #expect(logged[2]["route"] as? String == "unmatched" && logged[2]["method"] as? String == "other")
        #expect(logged[3]["route"] as? String == "healthz")
        for secret in [session, Self.apiKey, "order-secret-7", "/private", "wait", "bad id"] {
            #expect(!lines.text.contains(secret), "\(secret) in the access log")
        }
    }

    @Test func processAndBuildMetricsAreExported() throws {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry, version: "9.9.9-test")
        let metrics = try PrometheusText(registry.exposition())
        #expect(metrics.values("veridoc_build_info").first { $0.labels == ["version": "9.9.9-test"] }?.value == 1)
        for name in ["process_resident_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds"] {
            #expect((metrics.values(name).first?.value ?? 0) > 0, "\(name)")
        }
        #expect((metrics.values("process_cpu_seconds_total").first?.value ?? -1) >= 0)
        #expect(registry.exposition().contains("# TYPE process_cpu_seconds_total counter"))
    }
}
