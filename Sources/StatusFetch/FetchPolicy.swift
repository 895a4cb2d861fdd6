import HTTPClient
/// How strict a `StatusFetcher` is. The URLs it fetches come from
/// credentials, so the defaults are the strict ones: HTTPS with certificate
/// and host name verification, public addresses only, bounded in time, size,
/// redirects and connections per host.
public struct FetchPolicy: Sendable {
    /// false: https only (the first URL and every redirect), and only
    /// publicly routable addresses (`AddressRule`), checked on each address
    /// actually connected to. true: http too, and any address: for tests and
    /// development, never for credentials from outside.
    public var allowInsecure: Bool
    /// Seconds to set up a connection (TCP and TLS), within `totalTimeout`.
    public var connectTimeout: Double
    /// Seconds for the whole call: waiting for a connection slot, every hop, the body.
    public var totalTimeout: Double
    /// A longer body ends the transfer as soon as it is announced or arrives; nothing past it is kept.
    public var maxBodyBytes: Int
    /// Redirects followed (each to https, or http only with `allowInsecure`); one more is an error.
    public var maxRedirects: Int
    /// Fetches to one host:port under way at once through one fetcher; more wait for a slot (within `totalTimeout`).
    public var perHostConcurrency: Int
    /// A PEM CA bundle trusted instead of the system store (a test CA); nil: the system store.
    /// Certificate and host name verification are on either way.
    public var caFile: String?
    public var userAgent: String
    /// Lets 127.0.0.1, and only that address, through the address rule while
    /// `allowInsecure` is false, so that tests against a local server keep
    /// every other strict rule (https, redirects, the rest of 127/8).
    /// Not public: nothing outside this package may turn it on.
    package var allowsLoopbackForTests = false
    /// Set for one request by `FetchRequest.allowsPlainHTTP`.
    var permitsPlainHTTP = false

    public init(allowInsecure: Bool = false, connectTimeout: Double = 5, totalTimeout: Double = 15, maxBodyBytes: Int = 8 << 20,
                maxRedirects: Int = 3, perHostConcurrency: Int = 4, caFile: String? = nil, userAgent: String = "veridoc") {
        self.allowInsecure = allowInsecure
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
        self.perHostConcurrency = perHostConcurrency
        self.caFile = caFile
        self.userAgent = userAgent
    }

    /// Whether a socket to this address (4 or 16 bytes) may be opened.
    func permitsConnection(to address: [UInt8]) -> Bool {
        if allowInsecure { return true }
        if allowsLoopbackForTests && address == [127, 0, 0, 1] { return true }
        return address.count == 4 ? AddressRule.allows(ipv4: address) : AddressRule.allows(ipv6: address)
    }

    /// Whether a URL (the first or a redirect's) with this lowercased scheme may be fetched.
    func permitsScheme(_ scheme: String) -> Bool {
        scheme == "https" || ((allowInsecure || permitsPlainHTTP) && scheme == "http")
    }

    /// The schemes curl itself may speak under this policy.
    var protocols: String { allowInsecure || permitsPlainHTTP ? "http,https" : "https" }
}
