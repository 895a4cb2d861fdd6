import Crypto
import Foundation
import HTTPService
import MDoc
import JSON
import Observability
import Storage
import Synchronization
import Verification

/// The session API's request handling, apart from the socket: route, method,
/// key, rate limit, media type, then the endpoint. `veridoc serve` puts it
/// behind an `HTTPDaemon`; tests may call `handle` directly as well as over
/// HTTP.
///
/// The order of the checks is the contract's: an unknown path is 404 before
/// anything else, a known path with the wrong method 405, a /v1 route without
/// a valid key 401, then 429 for a key over its rate, 415 for a body that is
/// not JSON, 400 for one that does not fit the route.
public final class SessionAPI: Sendable {
    let tenants: APITenants
    let limiter: RateLimiter
    let polls: LongPollGate
    let metrics: APIMetrics
    let readiness: @Sendable () -> HTTPReadiness
    let clock: @Sendable () -> Date
    /// The sessions' database and producer; without them the session routes answer 503.
    let sessions: SessionService?
    /// The largest field a submitted response may have (the daemon's body limit).
    let maxBodyBytes: Int
    /// Where each request's access line goes; nil: nowhere (tests that call `handle`).
    let accessLog: Logger?
    /// Set by `drain`: long polls answer at once with the state as it is.
    private let draining = Atomic<Bool>(false)

    /// What one request's handling learns on the way, for its access line and metrics.
    struct Exchange {
        let requestID: String
        /// The tenant whose key the request carried, once authenticated.
        var tenant: String?
        /// A `GET /v1/sessions/{id}?wait=` that may wait.
        var longPoll = false
    }

    /// `longPolls`: how many `?wait=` polls may wait at once, per tenant and in all.
    public init(tenants: APITenants, rateLimit: (perSecond: Int, burst: Int), registry: MetricsRegistry = MetricsRegistry(),
                sessions: SessionService? = nil, maxBodyBytes: Int = 64 << 10, longPolls: (perTenant: Int, total: Int) = (32, 128),
                clock: @escaping @Sendable () -> Date = { Date() }, accessLog: Logger? = nil,
                readiness: @escaping @Sendable () -> HTTPReadiness = { .ready }) {
        self.accessLog = accessLog
        self.sessions = sessions
        self.maxBodyBytes = maxBodyBytes
        self.tenants = tenants
        limiter = RateLimiter(requestsPerSecond: rateLimit.perSecond, burst: rateLimit.burst)
        polls = LongPollGate(perTenant: longPolls.perTenant, total: longPolls.total)
        metrics = APIMetrics(registry: registry)
        if let soonest = tenants.directory.tenants.compactMap({ $0.webReader?.notAfter }).min() {
            metrics.webReaderExpiry.set(soonest.timeIntervalSince1970)
        }
        if let soonest = tenants.directory.tenants.compactMap({ $0.openID4VPVerifier?.notAfter }).min() {
            metrics.verifierExpiry.set(soonest.timeIntervalSince1970)
        }
        self.readiness = readiness
        self.clock = clock
        if let notifier = sessions?.notifier {
            metrics.listenerUp.sample { notifier.isListening ? 1 : 0 }
        }
        sessions?.startRelay { [metrics] result in
            guard case .success(let pass) = result else {
                metrics.relayFailures.increment()
                return
            }
            metrics.submissionsWaiting.set(Double(pass.waiting))
            metrics.submissionsRelayed.increment(by: Double(pass.relayed))
            metrics.sessionsFailed.increment(by: Double(pass.failedSessions), SessionsTable.FailureReason.verificationTimeout.rawValue)
        }
    }

    public var registry: MetricsRegistry { metrics.registry }

    /// Serve is stopping: every long poll waiting, and every one still to
    /// come, answers with the session's state as it is instead of waiting.
    var isDraining: Bool { draining.load(ordering: .relaxed) }

    public func drain() {
        draining.store(true, ordering: .relaxed)
        sessions?.notifier.wakeAll()
    }

    /// What the metrics listener answers `/readyz` with, counted as the API
    /// port's `/readyz` is (route `readyz`): the probes go there, and the
    /// alert on serve's readiness reads that count.
    public func probeReadiness() -> HTTPReadiness {
        let state = readiness()
        metrics.requests.increment(APIRoute.ready.label, state.ready ? "200" : "503")
        return state
    }

    /// Requests the daemon may handle on the socket thread that read them:
    /// all but a submission, which waits for the broker's acknowledgement,
    /// and readiness, which waits for the database when it is away. The
    /// rest block at most for a database round trip; a long poll or an
    /// event stream waits without a thread (`HTTPLater`, `HTTPStream`).
    public static func handlesInline(_ request: HTTPRequest) -> Bool {
        switch APIRoute.match(request.path)?.route {
        case .sessionResponse?, .ready?: false
        default: true
        }
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = ProcessInfo.processInfo.systemUptime
        let matched = APIRoute.match(request.path)
        var exchange = Exchange(requestID: RequestID.accept(request.header("X-Request-Id")))
        let response: HTTPResponse
        do {
            response = try respond(to: request, route: matched?.route, id: matched?.id, &exchange)
        } catch {
            response = error.response
        }
        let finished = exchange
        guard let later = response.later else { return finish(response, request: request, route: matched?.route, exchange: finished, started: started) }
        // A long poll: its line and latency when it answers.
        return .later(later.map { [self] in finish($0, request: request, route: matched?.route, exchange: finished, started: started) })
    }

    /// The headers every answer carries, its metrics and its access line.
    private func finish(_ answer: HTTPResponse, request: HTTPRequest, route: APIRoute?, exchange: Exchange, started: TimeInterval) -> HTTPResponse {
        var response = answer
        response.headers.append(("X-Request-Id", exchange.requestID))
        // Draining: a kept-alive client (a load balancer's pool) goes elsewhere for its next request.
        if isDraining { response.headers.append(("Connection", "close")) }
        // HEAD: libmicrohttpd sends the headers (Content-Length included) and not the body.
        let route = route?.label ?? APIRoute.unmatchedLabel
        let seconds = ProcessInfo.processInfo.systemUptime - started
        metrics.record(route: route, status: response.status, seconds: seconds, longPoll: exchange.longPoll)
        // The route's name, never the path: a path holds a session id, and an unmatched one anything a client sent.
        var fields = ["requestId": exchange.requestID, "method": Self.loggedMethod(request.method), "route": route,
                      "status": String(response.status), "ms": String(format: "%.1f", seconds * 1_000)]
        if let tenant = exchange.tenant { fields["tenant"] = tenant }
        if exchange.longPoll { fields["longPoll"] = "true" }
        accessLog?.info("request", fields)
        return response
    }

    /// The method as logged: one of HTTP's, else `other` (a client may send any token).
    static func loggedMethod(_ method: String) -> String {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].contains(method) ? method : "other"
    }

    private func respond(to request: HTTPRequest, route: APIRoute?, id: Substring?, _ exchange: inout Exchange) throws(APIError) -> HTTPResponse {
        guard let route else { throw .notFound }
        guard route.methods.contains(request.method) else { throw .methodNotAllowed(allow: route.methods.joined(separator: ", ")) }
        switch route {
        case .health:
            return .text(200, "ok\n")
        case .ready:
            let state = readiness()
            return .text(state.ready ? 200 : 503, state.reason + "\n")
        case .openAPI:
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: OpenAPIDocument.bytes)
        case .browserClient:
            // The path names the version, so a page may cache it for a day; CORS lets a page of any origin import it.
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "public, max-age=86400"),
                                                       ("Access-Control-Allow-Origin", "*")], body: ClientScript.bytes)
        case .readerTokens:
            let caller = try authenticate(request, &exchange)
            var body = try jsonBody(request)
            let identifier = try ReaderTokenEndpoint.read(&body)
            let token = try APIError.mapping { () throws(SessionError) in
                try ReaderTokenEndpoint.issue(identifier, signer: tenants.signers[Identifier(caller.tenant)], now: clock(), metrics: metrics)
            }
            return APIAnswers.readerToken(token)
        case .webhookKeys:
            let caller = try authenticate(request, &exchange)
            return APIAnswers.webhookKeys(tenants.webhookKeys[Identifier(caller.tenant)] ?? [])
        case .sessions where request.method != "POST":
            let caller = try authenticate(request, &exchange)
            let reference = try Self.reference(request.query)
            let sessions = try service()
            let found = try APIError.mapping { () throws(SessionError) in
                try SessionLookup.find(tenant: caller.tenant, reference: reference, service: sessions)
            }
            return APIAnswers.sessions(found, at: clock())
        case .sessions:
            let caller = try authenticate(request, &exchange)
            // Read before the body: a key that is not one is refused whatever the body holds.
            let idempotencyKey = try Self.idempotencyKey(request.header("Idempotency-Key"))
            var body = try jsonBody(request)
            guard let config = tenants.directory[caller.tenant] else { throw .internalError }
            let read = try SessionCreation.read(&body, tenant: config)
            // The body's bytes: a retry sends the same request again, byte for byte.
            let idempotency = idempotencyKey.map { SessionsTable.Idempotency(key: $0, requestDigest: sha256(request.body)) }
            let now = clock()
            let signers = try APIError.mapping { () throws(SessionError) in
                try SessionSigners.choose(for: read.flow, config: config, from: now, through: now + TimeInterval(read.lifetime(on: config)))
            }
            let sessions = try service()
            let created = try APIError.mapping { () throws(SessionError) in
                try SessionCreation.create(read, tenant: caller.tenant, config: config, signers: signers, service: sessions, now: now, metrics: metrics,
                                           idempotency: idempotency)
            }
            return APIAnswers.created(created)
        case .session:
            let caller = try authenticate(request, &exchange)
            guard let id = id.flatMap(Self.sessionID) else { throw .notFound }
            let wait = try Self.wait(request.query)
            let sessions = try service()
            exchange.longPoll = wait > 0
            guard wait > 0 else {
                guard let session = try APIError.mapping({ () throws(SessionError) in
                    try SessionLookup.find(tenant: caller.tenant, id: id, service: sessions, now: clock())
                }) else { throw .notFound }
                return APIAnswers.session(session, at: clock())
            }
            guard polls.enter(caller.tenant) else {
                metrics.pollsRefused.increment()
                throw .tooManyRequests(retryAfterSeconds: 1)
            }
            metrics.pollsWaiting.add(1)
            let later = HTTPLater()
            let tenant = caller.tenant, polls = polls, metrics = metrics, now = clock
            // The poll's place under the caps is given back once: at its answer, or when its client leaves first.
            let waiting = Atomic<Bool>(true)
            let leave: @Sendable () -> Bool = {
                guard waiting.exchange(false, ordering: .relaxed) else { return false }
                polls.leave(tenant)
                metrics.pollsWaiting.add(-1)
                return true
            }
            let watch = SessionLookup.watch(tenant: tenant, id: id, wait: wait, service: sessions, clock: now, draining: { [self] in isDraining }) { result in
                guard leave() else { return }
                switch result {
                case .success(let session): later.complete(APIAnswers.session(session, at: now()))
                case .failure(let error): later.complete(APIError(error).response)
                }
            }
            later.whenAbandoned {
                watch.end()
                // 499 (nginx's "client closed request"): the access line and the metrics say what became of it; nobody reads it.
                if leave() { later.complete(HTTPResponse(status: 499)) }
            }
            return .later(later)
        case .sessionEvents:
            let caller = try authenticate(request, &exchange)
            guard let id = id.flatMap(Self.sessionID) else { throw .notFound }
            let sessions = try service()
            // Found first: another tenant's session, or none, is a 404 before any stream.
            guard try APIError.mapping({ () throws(SessionError) in try SessionLookup.find(tenant: caller.tenant, id: id, service: sessions, now: clock()) }) != nil
            else { throw .notFound }
            // A stream waits like a long poll, and counts against the same caps.
            guard polls.enter(caller.tenant) else {
                metrics.pollsRefused.increment()
                throw .tooManyRequests(retryAfterSeconds: 1)
            }
            metrics.eventStreams.add(1)
            let tenant = caller.tenant, polls = polls, metrics = metrics
            let stream = SessionEvents.stream(tenant: tenant, id: id, lastEventID: SessionEvents.lastEventID(request.header("Last-Event-ID")),
                                              service: sessions, clock: clock, draining: { [self] in isDraining }) {
                polls.leave(tenant)
                metrics.eventStreams.add(-1)
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("X-Accel-Buffering", "no")], stream: stream)
        case .sessionResponse:
            let caller = try authenticate(request, &exchange)
            guard let id = id.flatMap(Self.sessionID) else { throw .notFound }
            var body = try jsonBody(request)
            let sessions = try service()
            guard let session = try APIError.mapping({ () throws(SessionError) in try SessionLookup.find(tenant: caller.tenant, id: id, service: sessions, now: clock()) })
            else { throw .notFound }
            guard let flow = Flow(rawValue: session.row.flow) else { throw .internalError }
            guard let config = tenants.directory[caller.tenant] else { throw .internalError }
            let answer = try SessionSubmission.read(&body, flow: flow, tenant: config, maxBytes: maxBodyBytes)
            try APIError.mapping { () throws(SessionError) in
                try SessionSubmission.submit(answer, to: session, service: sessions, now: clock(), maxBytes: maxBodyBytes)
            }
            return APIAnswers.accepted(id)
        }
    }

    /// The sessions' database and producer, or 503 when serve runs without them.
    private func service() throws(APIError) -> SessionService {
        guard let sessions else { throw .unavailable(SessionError.Dependency.database.rawValue) }
        return sessions
    }

    /// `Idempotency-Key`: 1 to 255 visible ASCII characters (what Stripe
    /// takes), nil when absent.
    static func idempotencyKey(_ header: String?) throws(APIError) -> String? {
        guard let header else { return nil }
        guard (1...255).contains(header.utf8.count), header.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidField("Idempotency-Key", expected: "1 to 255 visible ASCII characters")
        }
        return header
    }

    /// `GET /v1/sessions?reference=`: the integrator's reference, as sessions take it.
    static func reference(_ query: [String: String]) throws(APIError) -> String {
        guard let reference = query["reference"] else { throw .missingField("reference") }
        guard (1...256).contains(reference.utf8.count), reference.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .invalidField("reference", expected: "1 to 256 printable ASCII characters")
        }
        return reference
    }

    /// `?wait=SECONDS`: how long a session lookup may wait for a change.
    static func wait(_ query: [String: String]) throws(APIError) -> Int {
        guard let text = query["wait"] else { return 0 }
        guard let seconds = Int(text), (0...SessionLookup.maxWaitSeconds).contains(seconds) else {
            throw .invalidField("wait", expected: "a whole number of seconds from 0 to \(SessionLookup.maxWaitSeconds)")
        }
        return seconds
    }

    /// Whether a Content-Type names application/json, with or without
    /// parameters, in any case, spaces around it (RFC 9110 §8.3.1): read as
    /// bytes, since every request with a body asks.
    static func isJSON(_ header: String) -> Bool {
        var type = header.utf8[...]
        if let semicolon = type.firstIndex(of: UInt8(ascii: ";")) { type = type[..<semicolon] }
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        while let first = type.first, blank(first) { type = type.dropFirst() }
        while let last = type.last, blank(last) { type = type.dropLast() }
        let expected = "application/json".utf8
        let lowercased: (UInt8) -> UInt8 = { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        return type.count == expected.count && zip(type, expected).allSatisfy { lowercased($0) == $1 }
    }

    /// A session id as the API writes it: a UUID in lowercase. Anything else names no session.
    static func sessionID(_ text: Substring) -> UUID? {
        guard text.utf8.count == 36, let id = UUID(uuidString: String(text)), id.uuidString.lowercased() == text else { return nil }
        return id
    }

    private func authenticate(_ request: HTTPRequest, _ exchange: inout Exchange) throws(APIError) -> APIKeyring.Caller {
        guard let caller = tenants.keyring.caller(authorization: request.header("Authorization")) else { throw .unauthorized }
        exchange.tenant = caller.tenant
        if let wait = limiter.admit("\(caller.tenant)\u{0}\(caller.keyIndex)") { throw .tooManyRequests(retryAfterSeconds: wait) }
        return caller
    }

    private func jsonBody(_ request: HTTPRequest) throws(APIError) -> RequestBody {
        // The media type without its parameters (charset), compared case-insensitively (RFC 9110 §8.3.1).
        guard let header = request.header("Content-Type"), Self.isJSON(header) else { throw .unsupportedMediaType }
        return try RequestBody(request.body)
    }
}

/// Formats instants as the API writes them: RFC 3339 in UTC, whole seconds.
enum APITime {
    static func string(_ date: Date) -> String {
        RFC3339.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }
}
