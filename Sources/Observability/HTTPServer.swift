import CMicroHTTPD
import Foundation

/// The worker's small HTTP endpoint, served by GNU libmicrohttpd (its own
/// polling thread, one thread per connection, at most 64 connections, 10 s
/// idle timeout):
///
/// - `GET /metrics`: the registry in the Prometheus text format 0.0.4;
/// - `GET /healthz`: 200 `ok` while the process serves requests at all;
/// - `GET /readyz`: 200 `ready` when the readiness closure says so, else 503
///   with its short reason;
/// - 404 for other paths, 405 (with `Allow: GET, HEAD`) for other methods.
///
/// Responses are built from copies (`MHD_RESPMEM_MUST_COPY`), so nothing Swift
/// owns outlives a call. `stop` (or deinit) ends the daemon: when it returns,
/// no handler runs any more and the port is released.
///
/// Unchecked Sendable: `daemon` is written in init and cleared in `stop`
/// under `lock`; `context` is immutable and thread-safe.
public final class HTTPServer: @unchecked Sendable {
    public struct Readiness: Sendable, Equatable {
        public var ready: Bool
        /// A short, fixed explanation (no data from requests or events).
        public var reason: String

        public init(ready: Bool, reason: String) {
            self.ready = ready
            self.reason = reason
        }

        public static let ready = Readiness(ready: true, reason: "ready")
    }

    public struct Response: Sendable, Equatable {
        public var status: UInt32
        public var contentType: String
        public var body: String
        public var allow: String?
    }

    /// What the C callback reaches through its `cls` pointer.
    private final class Context: Sendable {
        let registry: MetricsRegistry
        let readiness: @Sendable () -> Readiness

        init(registry: MetricsRegistry, readiness: @escaping @Sendable () -> Readiness) {
            self.registry = registry
            self.readiness = readiness
        }
    }

    /// The port listened on (the chosen one when started with port 0).
    public let port: Int
    private let context: Unmanaged<Context>
    private let lock = NSLock()
    private var daemon: OpaquePointer?

    /// Binds `port` (0: an ephemeral port, see `port`) on all IPv4 addresses,
    /// or on 127.0.0.1 only with `loopbackOnly`. Throws when the port cannot be bound.
    public init(port: Int, loopbackOnly: Bool = false, registry: MetricsRegistry,
                readiness: @escaping @Sendable () -> Readiness) throws(HTTPServerError) {
        guard (0...65535).contains(port) else { throw HTTPServerError("port \(port) is outside 0…65535") }
        let context = Unmanaged.passRetained(Context(registry: registry, readiness: readiness))
        errno = 0
        let daemon = veridoc_mhd_start(UInt16(port), loopbackOnly ? 1 : 0, { cls, connection, url, method, _, _, _, _ in
            // Captures nothing: everything comes through `cls`.
            guard let cls, let connection else { return MHD_Result.NO }
            let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
            let response = HTTPServer.route(
                method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "",
                registry: context.registry, readiness: context.readiness)
            var body = Array(response.body.utf8)
            return body.withUnsafeMutableBytes { bytes in
                response.contentType.withCString { contentType in
                    if let allow = response.allow {
                        return allow.withCString { veridoc_mhd_respond(connection, response.status, contentType, bytes.baseAddress, bytes.count, $0) }
                    }
                    return veridoc_mhd_respond(connection, response.status, contentType, bytes.baseAddress, bytes.count, nil)
                }
            }
        }, context.toOpaque(), 64, 10)
        guard let daemon else {
            let code = errno
            context.release()
            throw HTTPServerError("cannot listen on port \(port): \(code == 0 ? "libmicrohttpd refused to start" : String(cString: strerror(code)))")
        }
        self.daemon = daemon
        self.context = context
        self.port = Int(veridoc_mhd_bound_port(daemon))
    }

    deinit { stop() }

    /// Stops listening, waits for handlers under way, and releases the port. Idempotent.
    public func stop() {
        lock.lock()
        let daemon = self.daemon
        self.daemon = nil
        lock.unlock()
        guard let daemon else { return }
        MHD_stop_daemon(daemon)
        // No callback can run any more: the context may go.
        context.release()
    }

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

public struct HTTPServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
