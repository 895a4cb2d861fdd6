/// The `serve` section: the session API (`veridoc serve`).
public struct ServeSettings: Sendable, Equatable {
    /// Where the API listens (`VERIDOC_SERVE_PORT`); 0 picks a free port.
    public var port = 8080
    /// 127.0.0.1 only (`VERIDOC_SERVE_LOOPBACK_ONLY`): behind a proxy on the same host, or in tests.
    public var loopbackOnly = false
    /// Connections held at once; libmicrohttpd refuses more.
    public var maxConnections = 256
    /// A connection idle this long is closed.
    public var idleTimeoutSeconds = 10
    /// Connections one client address may hold at once (behind a proxy every client is the proxy's address).
    public var maxConnectionsPerAddress = 64
    /// From accept (or the end of the previous response) to the end of a request's headers; then the connection is closed.
    public var headerTimeoutSeconds = 10
    /// From the end of the headers to the end of the body, and for a response to go out.
    public var bodyTimeoutSeconds = 30
    /// Long polls (`GET /v1/sessions/{id}?wait=`) one tenant may have waiting at once; more are 429.
    /// Whatever this says, all tenants together wait on at most half of `maxConnections`.
    public var maxWaitingPollsPerTenant = 32
    /// Requests each API key may make a second, and the burst above that rate.
    public var requestsPerSecondPerKey = 200
    public var burstPerKey = 400
    /// A reader token's lifetime: Apple accepts at most 300 s.
    public var readerTokenSeconds = 300
    /// PostgreSQL connections one serve process holds, shared by its requests
    /// (reads, submits); the session writer has one more of its own.
    public var postgresConnections = 8
    /// HTTPS by libmicrohttpd (GnuTLS): PEM files, the key only its owner may read. nil: plain HTTP.
    public var tls: TLS?
    /// One JSON line a request on stderr (`VERIDOC_SERVE_ACCESS_LOG`): its
    /// id, method, route name, status, latency and tenant, never a path, a
    /// body or a key.
    public var accessLog = true
    /// On SIGTERM: how long the requests under way may take to finish once
    /// new connections are refused and long polls answered; then serve exits.
    public var drainSeconds = 5
    /// How long past its expiry a processing session waits for its verdict
    /// before it fails: above the workers' 30 s clock skew, or a verdict
    /// could come for a session already shown failed.
    public var processingGraceSeconds = 60

    public struct TLS: Sendable, Equatable {
        public var certificateFile: String
        public var keyFile: String
    }

    public static let maxReaderTokenSeconds = 300

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        let portFromFile = try section?.integer("port", range: 0...65535)
        port = try environment.integer("VERIDOC_SERVE_PORT", range: 0...65535) ?? portFromFile ?? port
        let loopbackFromFile = try section?.bool("loopbackOnly")
        loopbackOnly = try environment.bool("VERIDOC_SERVE_LOOPBACK_ONLY") ?? loopbackFromFile ?? loopbackOnly
        maxConnections = try section?.integer("maxConnections", range: 1...65_536) ?? maxConnections
        idleTimeoutSeconds = try section?.integer("idleTimeoutSeconds", range: 1...3_600) ?? idleTimeoutSeconds
        maxConnectionsPerAddress = try section?.integer("maxConnectionsPerAddress", range: 1...65_536) ?? maxConnectionsPerAddress
        headerTimeoutSeconds = try section?.integer("headerTimeoutSeconds", range: 1...3_600) ?? headerTimeoutSeconds
        bodyTimeoutSeconds = try section?.integer("bodyTimeoutSeconds", range: 1...3_600) ?? bodyTimeoutSeconds
        maxWaitingPollsPerTenant = try section?.integer("maxWaitingPollsPerTenant", range: 0...65_536) ?? maxWaitingPollsPerTenant
        requestsPerSecondPerKey = try section?.integer("requestsPerSecondPerKey", range: 1...1_000_000) ?? requestsPerSecondPerKey
        burstPerKey = try section?.integer("burstPerKey", range: 1...10_000_000) ?? burstPerKey
        readerTokenSeconds = try section?.integer("readerTokenSeconds", range: 1...Self.maxReaderTokenSeconds) ?? readerTokenSeconds
        postgresConnections = try section?.integer("postgresConnections", range: 1...1_000) ?? postgresConnections
        drainSeconds = try section?.integer("drainSeconds", range: 1...120) ?? drainSeconds
        processingGraceSeconds = try section?.integer("processingGraceSeconds", range: 1...3_600) ?? processingGraceSeconds
        let accessLogFromFile = try section?.bool("accessLog")
        accessLog = try environment.bool("VERIDOC_SERVE_ACCESS_LOG") ?? accessLogFromFile ?? accessLog
        if var tls = try section?.object("tls") {
            guard let certificate = try tls.nonEmptyString("certificateFile") else { throw ConfigError("\(tls.setting("certificateFile")): required") }
            guard let key = try tls.nonEmptyString("keyFile") else { throw ConfigError("\(tls.setting("keyFile")): required") }
            try tls.finish()
            self.tls = TLS(certificateFile: certificate, keyFile: key)
        }
        try section?.finish()
    }
}
