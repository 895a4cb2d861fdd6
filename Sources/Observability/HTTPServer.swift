import Foundation
import HTTPService

/// The small HTTP endpoint of the worker and of `veridoc serve`, on an
/// `HTTPDaemon` (no request bodies; connections, per-address cap and
/// deadlines from `limits`, `observability.*` in the config):
///
/// - `GET /metrics`: the registry in the Prometheus text format 0.0.4;
/// - `GET /healthz`: 200 `ok` while the process serves requests at all;
/// - `GET /readyz`: 200 `ready` when the readiness closure says so, else 503
///   with its short reason;
/// - 404 for other paths, 405 (with `Allow: GET, HEAD`) for other methods.
///
/// The orchestrator restarts a process whose /healthz does not answer, so
/// this listener must not be one that strangers can fill: the defaults give a
/// request 2 s to arrive whole (a kubelet sends it at once), cap one address
/// at 16 connections, and keep an eighth of the slots free by evicting the
/// connections that have been reading the longest (`HTTPDaemon`).
///
/// `stop` (or deinit) ends the daemon: when it returns, no handler runs any
/// more and the port is released.
public final class HTTPServer: Sendable {
    /// The defaults of `observability.*`: 64 connections, 16 an address, 2 s for a request's headers, 10 s for a response.
    public static let defaultLimits = HTTPDaemon.Limits(maxBodyBytes: 0, connectionLimit: 64, idleTimeoutSeconds: 10, connectionsPerAddress: 16,
                                                        headerTimeoutSeconds: 2, bodyTimeoutSeconds: 10)

    public typealias Readiness = HTTPReadiness

    public struct Response: Sendable, Equatable {
        public var status: UInt32
        public var contentType: String
        public var body: String
        public var allow: String?

        var http: HTTPResponse {
            var response = HTTPResponse.text(status, body, contentType: contentType)
            if let allow { response.headers.append(("Allow", allow)) }
            return response
        }
    }

    /// The port listened on (the chosen one when started with port 0).
    public var port: Int { daemon.port }
    private let daemon: HTTPDaemon

    /// Binds `port` (0: an ephemeral port, see `port`) on all IPv4 addresses,
    /// or on 127.0.0.1 only with `loopbackOnly`. Throws when the port cannot be bound.
    /// `limits.maxBodyBytes` is ignored: no route here takes a body.
    public init(port: Int, loopbackOnly: Bool = false, limits: HTTPDaemon.Limits = HTTPServer.defaultLimits, registry: MetricsRegistry,
                readiness: @escaping @Sendable () -> Readiness) throws(HTTPServiceError) {
        var limits = limits
        limits.maxBodyBytes = 0
        // Only readiness may wait (on the database, say): the rest, liveness first, answers on the socket thread.
        daemon = try HTTPDaemon(port: port, loopbackOnly: loopbackOnly, limits: limits, runsInline: { $0.path != "/readyz" }) { request in
            HTTPServer.route(method: request.method, path: request.path, registry: registry, readiness: readiness).http
        }
    }

    /// Connections open, and shut down so far for a deadline or to make room.
    public var connectionCounts: (open: Int, timedOut: Int, evicted: Int) { daemon.connectionCounts }

    /// Stops listening, waits for handlers under way, and releases the port. Idempotent.
    public func stop() { daemon.stop() }

    /// The routing, apart from the C plumbing (so it can be tested directly).
    static func route(method: String, path: String, registry: MetricsRegistry, readiness: () -> Readiness) -> Response {
        let known = ["/metrics", "/healthz", "/readyz"]
        guard known.contains(path) else {
            return Response(status: 404, contentType: "text/plain; charset=utf-8", body: "not found\n")
        }
        guard method == "GET" || method == "HEAD" else {
            return Response(status: 405, contentType: "text/plain; charset=utf-8", body: "method not allowed\n", allow: "GET, HEAD")
        }
        switch path {
        case "/metrics":
            return Response(status: 200, contentType: MetricsRegistry.contentType, body: registry.exposition())
        case "/healthz":
            return Response(status: 200, contentType: "text/plain; charset=utf-8", body: "ok\n")
        default:
            let state = readiness()
            return Response(status: state.ready ? 200 : 503, contentType: "text/plain; charset=utf-8", body: state.reason + "\n")
        }
    }
}
