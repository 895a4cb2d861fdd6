/// The `observability` section.
public struct ObservabilitySettings: Sendable, Equatable {
    /// Where /metrics, /healthz and /readyz are served (`VERIDOC_HTTP_PORT`); 0 picks a free port.
    public var port = 9464
    /// debug, info, warning or error (`VERIDOC_LOG_LEVEL`).
    public var logLevel = "info"

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        let portFromEnvironment = try environment.integer("VERIDOC_HTTP_PORT", range: 0...65535)
        let portFromFile = try section?.integer("port", range: 0...65535)
        port = portFromEnvironment ?? portFromFile ?? port
        let logLevelFromFile = try section?.string("logLevel")
        logLevel = environment["VERIDOC_LOG_LEVEL"] ?? logLevelFromFile ?? logLevel
        try section?.finish()
    }
}
