/// How one of the worker's HTTP clients reaches servers run by others
/// (revocation lists, webhook receivers): bounded in time and in what is
/// read back, to public addresses over HTTPS unless `allowInsecure`. Both
/// sections read these keys the same way; each keeps its own defaults,
/// ranges and the name of its insecure switch.
public struct OutboundHTTPSettings: Sendable, Equatable {
    /// Plain http and private, loopback and link-local addresses allowed:
    /// for tests and development only, never in production.
    public var allowInsecure = false
    /// A PEM CA bundle servers must chain to, instead of the system's store (a private CA, a test CA).
    public var caFile: String?
    public var connectTimeoutSeconds = 5
    /// The whole exchange, from connecting to the last byte read (redirects included where they are followed).
    public var timeoutSeconds = 15
    /// The most read of a response.
    public var maxResponseBytes: Int

    public init(maxResponseBytes: Int) {
        self.maxResponseBytes = maxResponseBytes
    }

    /// Reads the keys into `self`; the caller finishes the section.
    mutating func read(_ section: inout SettingsObject, insecureKey: String, timeouts: ClosedRange<Int>, responseBytes: ClosedRange<Int>) throws(ConfigError) {
        allowInsecure = try section.bool(insecureKey) ?? allowInsecure
        caFile = try section.nonEmptyString("caFile")
        connectTimeoutSeconds = try section.integer("connectTimeoutSeconds", range: 1...60) ?? connectTimeoutSeconds
        timeoutSeconds = try section.integer("timeoutSeconds", range: timeouts) ?? timeoutSeconds
        maxResponseBytes = try section.integer("maxResponseBytes", range: responseBytes) ?? maxResponseBytes
        if connectTimeoutSeconds > timeoutSeconds {
            throw ConfigError("\(section.setting("connectTimeoutSeconds")): at most \(section.setting("timeoutSeconds"))")
        }
    }
}
