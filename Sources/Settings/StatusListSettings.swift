/// The `statusLists` section: how revocation lists named in MSOs, and the
/// CRLs certificates name, are fetched (docs/revocation.md). The URIs come
/// from issuer-signed data, but an issuer is still a stranger on the
/// network: fetches are bounded in time, size and concurrency, and go to
/// public addresses only (HTTPS, or plain http for a signed CRL).
public struct StatusListSettings: Sendable, Equatable {
    /// `allowInsecure`, `caFile`, the timeouts and `maxResponseBytes` (the
    /// most a list response may carry).
    public var http = OutboundHTTPSettings(maxResponseBytes: 8 << 20)
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
        try http.read(&section, insecureKey: "allowInsecure", timeouts: 1...300, responseBytes: 1_024...(256 << 20))
        maxListBytes = try section.integer("maxListBytes", range: 1_024...(256 << 20)) ?? maxListBytes
        perHostConcurrency = try section.integer("perHostConcurrency", range: 1...64) ?? perHostConcurrency
        fetchThreads = try section.integer("fetchThreads", range: 1...256) ?? fetchThreads
        maxCachedLists = try section.integer("maxCachedLists", range: 1...1_000_000) ?? maxCachedLists
        maxCacheBytes = try section.integer("maxCacheBytes", range: (1 << 20)...(1 << 40)) ?? maxCacheBytes
        recheckIntervalSeconds = try section.integer("recheckIntervalSeconds", range: 1...86_400) ?? recheckIntervalSeconds
        crlRefreshSeconds = try section.integer("crlRefreshSeconds", range: 1...86_400) ?? crlRefreshSeconds
        try section.finish()
    }
}
