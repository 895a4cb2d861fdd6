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
        requestsPerSecondPerKey = try section?.integer("requestsPerSecondPerKey", range: 1...1_000_000) ?? requestsPerSecondPerKey
        burstPerKey = try section?.integer("burstPerKey", range: 1...10_000_000) ?? burstPerKey
        readerTokenSeconds = try section?.integer("readerTokenSeconds", range: 1...Self.maxReaderTokenSeconds) ?? readerTokenSeconds
        postgresConnections = try section?.integer("postgresConnections", range: 1...1_000) ?? postgresConnections
        if var tls = try section?.object("tls") {
            guard let certificate = try tls.nonEmptyString("certificateFile") else { throw ConfigError("\(tls.setting("certificateFile")): required") }
            guard let key = try tls.nonEmptyString("keyFile") else { throw ConfigError("\(tls.setting("keyFile")): required") }
            try tls.finish()
            self.tls = TLS(certificateFile: certificate, keyFile: key)
        }
        try section?.finish()
    }
}
