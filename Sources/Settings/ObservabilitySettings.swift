/// The `observability` section.
public struct ObservabilitySettings: Sendable, Equatable {
    /// Where /metrics, /healthz and /readyz are served (`VERIDOC_HTTP_PORT`); 0 picks a free port.
    public var port = 9464
    /// `VERIDOC_LOG_LEVEL` or `logLevel`.
    public var logLevel = LogLevel.info

    /// debug, info, warning (or warn) or error, in any case.
    public enum LogLevel: String, Sendable, Equatable, CaseIterable {
        case debug, info, warning, error

        init(_ name: String, setting: String) throws(ConfigError) {
            let lowercased = name.lowercased()
            guard let level = lowercased == "warn" ? .warning : LogLevel(rawValue: lowercased) else {
                throw ConfigError("\(setting): \(name) is not one of debug, info, warning, error")
            }
            self = level
        }
    }
    /// Connections the listener holds at once.
    public var maxConnections = 64
    /// Connections one client address may hold at once: a kubelet or a Prometheus needs one or two.
    public var maxConnectionsPerAddress = 16
    /// From accept to the end of a request's headers: a probe sends its request at once.
    public var headerTimeoutSeconds = 2
    /// For a response (/metrics) to go out.
    public var bodyTimeoutSeconds = 10

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        port = try environment.integer("VERIDOC_HTTP_PORT", over: "port", in: &section, range: 0...65535) ?? port
        let logLevelFromFile = try section?.string("logLevel")
        if let name = environment["VERIDOC_LOG_LEVEL"] ?? logLevelFromFile { logLevel = try LogLevel(name, setting: "observability.logLevel") }
        maxConnections = try section?.integer("maxConnections", range: 8...65_536) ?? maxConnections
        maxConnectionsPerAddress = try section?.integer("maxConnectionsPerAddress", range: 1...65_536) ?? maxConnectionsPerAddress
        headerTimeoutSeconds = try section?.integer("headerTimeoutSeconds", range: 1...3_600) ?? headerTimeoutSeconds
        bodyTimeoutSeconds = try section?.integer("bodyTimeoutSeconds", range: 1...3_600) ?? bodyTimeoutSeconds
        try section?.finish()
    }
}
