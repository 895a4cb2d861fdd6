/// The `statusLists` section: how revocation lists named in MSOs, and the
/// CRLs certificates name, are fetched (docs/revocation.md). The URIs come
/// from issuer-signed data, but an issuer is still a stranger on the
/// network: fetches are bounded in time, size and concurrency, and go to
/// public addresses only (HTTPS, or plain http for a signed CRL).
public struct StatusListSettings: Sendable, Equatable {
    /// Plain http and private, loopback and link-local addresses allowed:
    /// for tests and development only, never in production.
    public var allowInsecure = false
    /// A PEM CA bundle list servers must chain to, instead of the system's store (a private issuer's CA, a test CA).
    public var caFile: String?
    public var connectTimeoutSeconds = 5
    /// The whole fetch, redirects included.
    public var timeoutSeconds = 15
    /// The most a list response may carry.
    public var maxResponseBytes = 8 << 20
    /// The most a list may inflate to: 2^24 entries of 8 bits, or 16 million of 1 bit.
    public var maxListBytes = 16 << 20
    /// Concurrent fetches to one host.
    public var perHostConcurrency = 4
    /// Threads fetching lists, all hosts together: more than one host's
    /// share, so that a slow issuer holds only its share.
    public var fetchThreads = 16
    /// Lists kept in memory; the least recently used beyond it are dropped (and fetched again when needed).
    public var maxCachedLists = 1_000
    /// Memory the lists kept may hold together (inflated lists, CRL entries), likewise.
    public var maxCacheBytes = 512 << 20
    /// How often the worker reads the lists of retained accepted results again.
    public var recheckIntervalSeconds = 300
    /// How long a fetched CRL is used before it is fetched again (never past its nextUpdate).
    public var crlRefreshSeconds = 3_600

    public init() {}

    init(_ section: SettingsObject?) throws(ConfigError) {
        guard var section else { return }
        allowInsecure = try section.bool("allowInsecure") ?? allowInsecure
        caFile = try section.nonEmptyString("caFile")
        connectTimeoutSeconds = try section.integer("connectTimeoutSeconds", range: 1...60) ?? connectTimeoutSeconds
        timeoutSeconds = try section.integer("timeoutSeconds", range: 1...300) ?? timeoutSeconds
        maxResponseBytes = try section.integer("maxResponseBytes", range: 1_024...(256 << 20)) ?? maxResponseBytes
        maxListBytes = try section.integer("maxListBytes", range: 1_024...(256 << 20)) ?? maxListBytes
        perHostConcurrency = try section.integer("perHostConcurrency", range: 1...64) ?? perHostConcurrency
        fetchThreads = try section.integer("fetchThreads", range: 1...256) ?? fetchThreads
        maxCachedLists = try section.integer("maxCachedLists", range: 1...1_000_000) ?? maxCachedLists
        maxCacheBytes = try section.integer("maxCacheBytes", range: (1 << 20)...(1 << 40)) ?? maxCacheBytes
        recheckIntervalSeconds = try section.integer("recheckIntervalSeconds", range: 1...86_400) ?? recheckIntervalSeconds
        crlRefreshSeconds = try section.integer("crlRefreshSeconds", range: 1...86_400) ?? crlRefreshSeconds
        if connectTimeoutSeconds > timeoutSeconds {
            throw ConfigError("\(section.setting("connectTimeoutSeconds")): at most statusLists.timeoutSeconds")
        }
        try section.finish()
    }
}
