import CMicroHTTPD
import Foundation

/// An HTTP/1.1 server on GNU libmicrohttpd. A few threads (`Limits.ioThreads`)
/// move every connection's bytes on epoll; the handler runs on a work queue
/// (`Limits.workThreads`) while its connection is suspended, so a handler
/// may block (a database round trip) without holding up other connections,
/// and a connection waiting for an answer (`HTTPLater`) or for a stream's
/// next chunk (`HTTPStream`) holds no thread at all. The handler sees each
/// request once, whole: the daemon collects the body itself, within `Limits.maxBodyBytes`,
/// and answers 413 for a larger one without keeping any of it (a declared
/// Content-Length at once, a chunked body when it ends).
///
/// No client may hold the daemon (`Limits`, `ConnectionGuard`): each
/// connection has a header deadline and a body deadline however steadily its
/// bytes come, one address holds at most `connectionsPerAddress`, and near
/// the connection limit a new connection evicts the one reading the longest,
/// so a request sent at once (a probe) is not shut out by slow ones. Requests are read as
/// strict HTTP/1.1: what two readers could frame, route or authenticate
/// differently is 400 before the handler (`framingProblem`).
///
/// Responses are copied into libmicrohttpd (`MHD_RESPMEM_MUST_COPY`), and
/// each request's state is freed by the request-completed callback, so
/// nothing Swift owns outlives a request. `stop` (or deinit) ends the
/// daemon: when it returns no handler runs any more and the port is free.
///
/// Unchecked Sendable: `daemon` is written in init and cleared in `stop`
/// under `lock`; `context` is immutable and its parts Sendable.
public final class HTTPDaemon: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    public struct Limits: Sendable {
        public var maxBodyBytes: Int
        public var connectionLimit: UInt32
        public var idleTimeoutSeconds: UInt32
        /// Connections one client address may hold at once (libmicrohttpd refuses more); 0: no cap.
        public var connectionsPerAddress: UInt32
        /// From accept, or from the end of the previous response, to the end of a request's headers.
        public var headerTimeoutSeconds: Double
        /// From the end of the headers to the end of the body, and again from the response queued to its last byte sent.
        public var bodyTimeoutSeconds: Double
        /// Connection slots kept free: above `connectionLimit` less these, a new connection evicts the oldest one still reading or sending.
        public var reservedConnections: UInt32
        /// Threads reading and writing sockets (each its own epoll set).
        public var ioThreads: Int
        /// Handlers that may run at once; the rest wait in order, their connections suspended.
        public var workThreads: Int

        public init(maxBodyBytes: Int = 64 << 10, connectionLimit: UInt32 = 64, idleTimeoutSeconds: UInt32 = 10,
                    connectionsPerAddress: UInt32 = 0, headerTimeoutSeconds: Double = 10, bodyTimeoutSeconds: Double = 30,
                    reservedConnections: UInt32? = nil, ioThreads: Int = 1, workThreads: Int = 4) {
            self.maxBodyBytes = maxBodyBytes
            self.connectionLimit = connectionLimit
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.connectionsPerAddress = connectionsPerAddress
            self.headerTimeoutSeconds = headerTimeoutSeconds
            self.bodyTimeoutSeconds = bodyTimeoutSeconds
            self.reservedConnections = reservedConnections ?? Self.defaultReserve(connectionLimit)
            self.ioThreads = ioThreads
            self.workThreads = workThreads
        }

        /// An eighth of the connections, at least 2: room for what arrives while evicted sockets close.
        public static func defaultReserve(_ connectionLimit: UInt32) -> UInt32 { max(2, connectionLimit / 8) }
    }

    /// What the C callbacks reach through their `cls` pointer.
    private final class Context: Sendable {
        let handler: Handler
        let runsInline: @Sendable (HTTPRequest) -> Bool
        let maxBodyBytes: Int
        let connections: ConnectionGuard
        let suspensions = Suspensions()
        let work: WorkQueue

        init(handler: @escaping Handler, runsInline: @escaping @Sendable (HTTPRequest) -> Bool, maxBodyBytes: Int, connections: ConnectionGuard,
             work: WorkQueue) {
            self.handler = handler
            self.runsInline = runsInline
            self.maxBodyBytes = maxBodyBytes
            self.connections = connections
            self.work = work
        }

        /// Runs the handler on the work queue, the connection suspended
        /// until its answer is handed over. False when the daemon is
        /// stopping (nothing suspended).
        func dispatch(_ request: HTTPRequest, for exchange: Exchange, on connection: OpaquePointer) -> Bool {
            guard suspend(exchange, connection) else { return false }
            let submitted = work.submit { [self] in
                let response = handler(request)
                if let later = response.later {
                    awaitAnswer(later, for: exchange)
                } else {
                    answer(exchange, response)
                }
            }
            if !submitted { answer(exchange, HTTPDaemon.stopping) }
            return true
        }

        /// Suspends the request's connection; if its client hangs up meanwhile, it is resumed with an answer nobody reads.
        func suspend(_ exchange: Exchange, _ connection: OpaquePointer) -> Bool {
            suspensions.suspend(connection, key: exchange, handOver: { exchange.answer = HTTPDaemon.clientGone })
        }

        /// The connection, suspended already, waits for `later`; a client that
        /// hangs up meanwhile abandons it.
        func awaitAnswer(_ later: HTTPLater, for exchange: Exchange) {
            suspensions.whenGone(key: exchange) { later.abandon() }
            later.whenComplete { [self] in answer(exchange, $0) }
        }

        /// Hands `response` to the request and resumes its connection (nothing, if the daemon stopped since).
        func answer(_ exchange: Exchange, _ response: HTTPResponse) {
            // An answer that is itself to come later has no answer to give.
            let response = response.later == nil ? response : HTTPDaemon.internalError
            // No connection to take it (the daemon stopped): a stream ends here, so that its maker stops too.
            if !suspensions.resume(key: exchange, handOver: { exchange.answer = response }) { response.stream?.close() }
        }
    }

    /// A stream's response as its content reader sees it: the stream, and
    /// the connection to suspend while it has nothing to send.
    private final class StreamBinding: @unchecked Sendable {
        let stream: HTTPStream
        let connection: OpaquePointer
        let suspensions: Suspensions

        init(stream: HTTPStream, connection: OpaquePointer, suspensions: Suspensions) {
            self.stream = stream
            self.connection = connection
            self.suspensions = suspensions
        }
    }

    /// One request under way, kept in libmicrohttpd's per-request pointer
    /// from its first callback to the completed callback.
    ///
    /// Unchecked Sendable: touched only by the connection's daemon thread,
    /// but for `answer`, which is handed over under the suspensions' lock.
    private final class Exchange: @unchecked Sendable {
        /// The request target as sent, before libmicrohttpd decodes it.
        let target: String
        /// The target's length in bytes up to its first NUL, as libmicrohttpd read it.
        let targetLength: Int
        /// The headers are in and were checked.
        var started = false
        var body: [UInt8] = []
        /// A response has been queued (413 early, or the handler's).
        var answered = false
        /// The body went past the limit; what comes after is counted, not kept.
        var overflowed = false
        var dropped = 0
        var headers: [String: String] = [:]
        /// The handler has the request; the connection waits for `answer`.
        var dispatched = false
        var answer: HTTPResponse?
        /// How many times each (lowercased) header name came.
        var headerCounts: [String: Int] = [:]
        var query: [String: String] = [:]

        init(target: UnsafePointer<CChar>?) {
            self.target = target.map { String(cString: $0) } ?? ""
            targetLength = target.map { strlen($0) } ?? 0
        }
    }

    /// A certificate chain and its private key, both PEM, for HTTPS.
    public struct TLS: Sendable {
        public var certificatePEM: String
        public var keyPEM: String

        public init(certificatePEM: String, keyPEM: String) {
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
        }
    }

    /// Whether the linked libmicrohttpd can speak TLS (Debian's is built with GnuTLS).
    public static var supportsTLS: Bool { veridoc_mhd_supports_tls() != 0 }

    /// The port listened on (the chosen one when started with port 0).
    public let port: Int
    private let context: Unmanaged<Context>
    /// The context's guard, held here too so that its counts outlive `stop`.
    private let connections: ConnectionGuard
    /// The PEM strings libmicrohttpd reads for TLS: owned here, freed after the daemon stopped.
    private let tlsStrings: (key: UnsafeMutablePointer<CChar>, certificate: UnsafeMutablePointer<CChar>)?
    private let lock = NSLock()
    private var daemon: OpaquePointer?

    /// Binds `port` (0: an ephemeral port, see `port`) on all IPv4 addresses,
    /// or on 127.0.0.1 only with `loopbackOnly`. Throws when it cannot be bound.
    /// `runsInline`: requests handled on the socket thread that read them,
    /// without the hop to the work queue and back (a suspension and a
    /// resumption, each resumption costing libmicrohttpd a walk through all
    /// of that thread's suspended connections). For handlers that never
    /// block, or block only briefly (a database round trip, with as many
    /// socket threads as the database has connections to give); a handler
    /// that may wait long (a broker's acknowledgement) belongs on the queue,
    /// or the thread's other connections wait with it.
    public init(port: Int, loopbackOnly: Bool = false, limits: Limits = Limits(), tls: TLS? = nil,
                runsInline: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false }, handler: @escaping Handler) throws(HTTPServiceError) {
        guard (0...65535).contains(port) else { throw HTTPServiceError("port \(port) is outside 0…65535") }
        if tls != nil && !Self.supportsTLS { throw HTTPServiceError("this libmicrohttpd was built without TLS") }
        let tlsStrings = tls.map { (key: strdup($0.keyPEM)!, certificate: strdup($0.certificatePEM)!) }
        let connections = ConnectionGuard(settings: ConnectionGuard.Settings(
            headerTimeout: max(0.1, limits.headerTimeoutSeconds), bodyTimeout: max(0.1, limits.bodyTimeoutSeconds),
            evictionThreshold: max(1, Int(limits.connectionLimit) - Int(limits.reservedConnections))))
        let work = WorkQueue(maxThreads: limits.workThreads, name: "http-work")
        let context = Unmanaged.passRetained(Context(handler: handler, runsInline: runsInline, maxBodyBytes: max(0, limits.maxBodyBytes),
                                                     connections: connections, work: work))
        errno = 0
        let daemon = veridoc_mhd_start(UInt16(port), loopbackOnly ? 1 : 0, { cls, connection, url, method, version, uploadData, uploadSize, state in
            // Captures nothing: everything comes through `cls` and `state`.
            guard let cls, let connection, let uploadSize, let state else { return MHD_Result.NO }
            let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
            let tracked = HTTPDaemon.tracked(connection)
            if state.pointee == nil {
                // Not reached while the URI callback runs first; kept so a request never goes without its state.
                state.pointee = Unmanaged.passRetained(Exchange(target: url)).toOpaque()
            }
            let exchange = Unmanaged<Exchange>.fromOpaque(state.pointee!).takeUnretainedValue()
            if !exchange.started {
                // First call: the headers are in, the body (if any) is not.
                exchange.started = true
                if let tracked { context.connections.headersReceived(tracked) }
                let unmanaged = Unmanaged.passUnretained(exchange).toOpaque()
                MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, { cls, _, key, value in
                    guard let cls, let key else { return MHD_Result.YES }
                    let exchange = Unmanaged<Exchange>.fromOpaque(cls).takeUnretainedValue()
                    let name = String(cString: key).lowercased()
                    exchange.headers[name] = value.map { String(cString: $0) } ?? ""
                    exchange.headerCounts[name, default: 0] += 1
                    return MHD_Result.YES
                }, unmanaged)
                // libmicrohttpd ends the target where its version begins (the
                // space between them made a NUL): a target that ends sooner
                // held a NUL of its own, which the C strings hide.
                let nulInTarget = url.map { UnsafeRawPointer($0) + exchange.targetLength + 1 } != version.map { UnsafeRawPointer($0) }
                if let problem = nulInTarget ? "a NUL in the target"
                    : HTTPDaemon.framingProblem(target: exchange.target, headers: exchange.headers, counts: exchange.headerCounts) {
                    exchange.answered = true
                    if let tracked { context.connections.sending(tracked) }
                    return HTTPDaemon.queue(HTTPDaemon.badRequest(problem), on: connection, suspensions: context.suspensions)
                }
                let declared = exchange.headers["content-length"].flatMap { Int($0) }
                if let declared, declared > context.maxBodyBytes {
                    exchange.answered = true
                    if let tracked { context.connections.sending(tracked) }
                    return HTTPDaemon.queue(HTTPDaemon.tooLarge(context.maxBodyBytes), on: connection, suspensions: context.suspensions)
                }
                return MHD_Result.YES
            }
            if uploadSize.pointee > 0 {
                let count = uploadSize.pointee
                uploadSize.pointee = 0
                guard !exchange.answered else { return MHD_Result.YES }
                if exchange.overflowed || exchange.body.count + count > context.maxBodyBytes {
                    // A chunked body past the limit. libmicrohttpd takes a
                    // response only before the body or after all of it, so
                    // the rest is read and dropped, and the 413 goes when it
                    // ends; a body that goes on past 16 times the limit is
                    // not a client waiting for an answer, and is cut off.
                    exchange.overflowed = true
                    exchange.body = []
                    exchange.dropped += count
                    return exchange.dropped > 16 * max(context.maxBodyBytes, 4096) ? MHD_Result.NO : MHD_Result.YES
                }
                guard let uploadData else { return MHD_Result.NO }
                uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
                return MHD_Result.YES
            }
            if exchange.dispatched {
                // Resumed: the handler's answer was handed over, or the daemon is stopping.
                let answer = context.suspensions.withLock { () -> HTTPResponse? in
                    defer { exchange.answer = nil }
                    return exchange.answer
                } ?? HTTPDaemon.stopping
                if let tracked, answer.stream == nil { context.connections.sending(tracked) }
                return HTTPDaemon.queue(answer, on: connection, suspensions: context.suspensions)
            }
            guard !exchange.answered else { return MHD_Result.YES }
            exchange.answered = true
            if exchange.overflowed {
                if let tracked { context.connections.sending(tracked) }
                return HTTPDaemon.queue(HTTPDaemon.tooLarge(context.maxBodyBytes), on: connection, suspensions: context.suspensions)
            }
            MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, { cls, _, key, value in
                guard let cls, let key else { return MHD_Result.YES }
                let exchange = Unmanaged<Exchange>.fromOpaque(cls).takeUnretainedValue()
                exchange.query[String(cString: key)] = value.map { String(cString: $0) } ?? ""
                return MHD_Result.YES
            }, Unmanaged.passUnretained(exchange).toOpaque())
            var request = HTTPRequest(method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "",
                                      query: exchange.query, body: exchange.body)
            request.headers = exchange.headers
            exchange.body = []
            // A stream stays in the handling phase: its maker bounds it, not the send deadline.
            if let tracked { context.connections.handling(tracked) }
            if context.runsInline(request) {
                let response = context.handler(request)
                guard let later = response.later else {
                    if let tracked, response.stream == nil { context.connections.sending(tracked) }
                    return HTTPDaemon.queue(response, on: connection, suspensions: context.suspensions)
                }
                // An answer to come (a long poll): the connection waits for it suspended, holding no thread.
                exchange.dispatched = true
                guard context.suspend(exchange, connection) else {
                    return HTTPDaemon.queue(HTTPDaemon.stopping, on: connection, suspensions: context.suspensions)
                }
                context.awaitAnswer(later, for: exchange)
                return MHD_Result.YES
            }
            exchange.dispatched = true
            guard context.dispatch(request, for: exchange, on: connection) else {
                return HTTPDaemon.queue(HTTPDaemon.stopping, on: connection, suspensions: context.suspensions)
            }
            return MHD_Result.YES
        }, context.toOpaque(), { cls, connection, state, _ in
            // However the request ended (answered, timed out, the client gone), its state goes here.
            if let cls, let connection, let tracked = HTTPDaemon.tracked(connection) {
                Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue().connections.requestEnded(tracked)
            }
            guard let state, let pointer = state.pointee else { return }
            Unmanaged<Exchange>.fromOpaque(pointer).release()
            state.pointee = nil
        }, { _, uri, _ in
            // The target as the client sent it: libmicrohttpd decodes the path (and so hides %00 and %2e) before the handler sees it.
            Unmanaged.passRetained(Exchange(target: uri)).toOpaque()
        }, { cls, connection, socketContext, code in
            guard let cls, let connection, let socketContext else { return }
            let connections = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue().connections
            if code == MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED {
                let tracked = connections.opened(descriptor: veridoc_mhd_connection_fd(connection))
                socketContext.pointee = Unmanaged.passRetained(tracked).toOpaque()
            } else if let pointer = socketContext.pointee {
                let tracked = Unmanaged<ConnectionGuard.Tracked>.fromOpaque(pointer)
                connections.closed(tracked.takeUnretainedValue())
                tracked.release()
                socketContext.pointee = nil
            }
        }, limits.connectionLimit, limits.connectionsPerAddress, limits.idleTimeoutSeconds, UInt32(max(1, limits.ioThreads)),
        tlsStrings.map { UnsafePointer($0.key) }, tlsStrings.map { UnsafePointer($0.certificate) })
        guard let daemon else {
            let code = errno
            work.stop()
            context.release()
            if let tlsStrings { Self.erase(tlsStrings) }
            if tls != nil { throw HTTPServiceError("cannot listen on port \(port) with TLS: the certificate or key was refused, or \(code == 0 ? "libmicrohttpd refused to start" : String(cString: strerror(code)))") }
            throw HTTPServiceError("cannot listen on port \(port): \(code == 0 ? "libmicrohttpd refused to start" : String(cString: strerror(code)))")
        }
        self.daemon = daemon
        self.context = context
        self.connections = connections
        connections.start()
        self.tlsStrings = tlsStrings
        self.port = Int(veridoc_mhd_bound_port(daemon))
    }

    deinit { stop() }

    /// Stops listening, waits for handlers under way, and releases the port. Idempotent.
    /// Stops accepting connections (the listening socket is closed) while
    /// the requests under way go on; `stop` then waits for them.
    public func quiesce() {
        lock.lock()
        defer { lock.unlock() }
        guard let daemon else { return }
        let socket = MHD_quiesce_daemon(daemon)
        if socket >= 0 { close(socket) }
    }

    /// Waits until no request is being handled or answered, or `timeout`
    /// passes (after `quiesce`, so that none starts); whether none is left.
    /// `stop` shuts every connection down at once, a response still going
    /// out included, so a drain waits here first.
    public func waitForRequests(timeout: TimeInterval) -> Bool {
        let deadline = ProcessInfo.processInfo.systemUptime + timeout
        while connections.requestsUnderWay > 0 {
            guard ProcessInfo.processInfo.systemUptime < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }

    public func stop() {
        lock.lock()
        let daemon = self.daemon
        self.daemon = nil
        lock.unlock()
        guard let daemon else { return }
        let context = self.context.takeUnretainedValue()
        // libmicrohttpd aborts when stopped with a connection suspended: none is, from here on.
        context.suspensions.stop()
        MHD_stop_daemon(daemon)
        // No callback runs any more; the handlers still running finish (their answers go nowhere).
        context.work.stop()
        connections.stop()
        self.context.release()
        if let tlsStrings { Self.erase(tlsStrings) }
    }

    /// Zeroes and frees the PEM copies: one of them is a private key.
    private static func erase(_ strings: (key: UnsafeMutablePointer<CChar>, certificate: UnsafeMutablePointer<CChar>)) {
        for pointer in [strings.key, strings.certificate] {
            memset(pointer, 0, strlen(pointer))
            free(pointer)
        }
    }

    private static func tooLarge(_ limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                     body: Array("{\"error\":\"body_too_large\",\"detail\":\"the body is larger than \(limit) bytes\"}".utf8))
    }

    /// The connection's entry in the guard (nil if libmicrohttpd did not report its start).
    private static func tracked(_ connection: OpaquePointer) -> ConnectionGuard.Tracked? {
        veridoc_mhd_socket_context(connection).map { Unmanaged<ConnectionGuard.Tracked>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Connections open, and shut down so far for a deadline or to make room.
    public var connectionCounts: (open: Int, timedOut: Int, evicted: Int) { connections.counts }

    /// The answer of a request the daemon will not handle: it is stopping.
    static let stopping = HTTPResponse(status: 503, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                                       body: Array("{\"error\":\"unavailable\",\"detail\":\"the server is stopping\"}".utf8))

    /// What a request whose client hung up while it waited is answered: nobody reads it.
    static let clientGone = HTTPResponse(status: 400, headers: [("Connection", "close")])

    static let internalError = HTTPResponse(status: 500, headers: [("Content-Type", "application/json")],
                                            body: Array("{\"error\":\"internal_error\",\"detail\":\"the handler gave no answer\"}".utf8))

    private static func badRequest(_ problem: String) -> HTTPResponse {
        HTTPResponse(status: 400, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                     body: Array("{\"error\":\"malformed_request\",\"detail\":\"\(problem)\"}".utf8))
    }

    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer, suspensions: Suspensions) -> MHD_Result {
        let headers = response.headers + [("Cache-Control", "no-store")]
        // strdup'd copies: C strings that stay valid for the call, freed right after.
        let names = headers.map { strdup($0.name) }
        let values = headers.map { strdup($0.value) }
        defer { (names + values).forEach { free($0) } }
        let constNames = names.map { UnsafePointer($0) }
        let constValues = values.map { UnsafePointer($0) }
        if let stream = response.stream {
            let retained = Unmanaged.passRetained(StreamBinding(stream: stream, connection: connection, suspensions: suspensions)).toOpaque()
            return constNames.withUnsafeBufferPointer { names in
                constValues.withUnsafeBufferPointer { values in
                    veridoc_mhd_respond_stream(connection, response.status, names.baseAddress, values.baseAddress, headers.count, { cls, _, buffer, capacity in
                        guard let cls, let buffer else { return veridoc_mhd_end_of_stream() }
                        let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeUnretainedValue()
                        // 0 bytes only with the connection suspended: libmicrohttpd would call again at once, a busy wait.
                        let read = binding.stream.read(into: UnsafeMutableRawPointer(buffer), capacity: capacity) {
                            guard binding.suspensions.suspend(binding.connection, key: binding) else { return nil }
                            return { binding.suspensions.resume(key: binding) }
                        }
                        switch read {
                        case .bytes(let count): return count
                        case .suspended: return 0
                        case .end: return veridoc_mhd_end_of_stream()
                        }
                    }, retained, { cls in
                        guard let cls else { return }
                        let binding = Unmanaged<StreamBinding>.fromOpaque(cls)
                        binding.takeUnretainedValue().stream.close()
                        binding.release()
                    })
                }
            }
        }
        return response.body.withUnsafeBytes { body in
            constNames.withUnsafeBufferPointer { names in
                constValues.withUnsafeBufferPointer { values in
                    veridoc_mhd_respond(connection, response.status, body.baseAddress, body.count, names.baseAddress, values.baseAddress, headers.count)
                }
            }
        }
    }
}

public struct HTTPServiceError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
