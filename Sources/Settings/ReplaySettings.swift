/// The `replay` section.
public struct ReplaySettings: Sendable, Equatable {
    /// The HMAC key for stored nonces (`VERIDOC_NONCE_KEY_FILE`), shared by all workers; required by the worker.
    public var nonceKeyFile: String?

    public init() {}

    init(_ section: SettingsObject?, _ environment: Environment) throws(ConfigError) {
        var section = section
        let nonceKeyFileFromFile = try section?.string("nonceKeyFile")
        nonceKeyFile = environment["VERIDOC_NONCE_KEY_FILE"] ?? nonceKeyFileFromFile
        try section?.finish()
    }
}
