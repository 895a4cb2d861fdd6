/// One GET: the URL (from a credential, so untrusted) and the headers a
/// status list fetch sends. The conditional headers carry what an earlier
/// response said (its ETag and Last-Modified), so a list not changed since
/// comes back as `.notModified` without its body.
public struct FetchRequest: Sendable {
    public var url: String
    /// The media types asked for, e.g. `application/statuslist+cwt`.
    public var accept: String
    public var ifNoneMatch: String?
    public var ifModifiedSince: String?
    /// Lets this request (and its redirects) use plain http to public
    /// addresses: for content whose integrity does not rest on the
    /// connection (a CRL, signed by its issuer, served over http by custom,
    /// RFC 5280 §4.2.1.13). Every address rule still applies, and a
    /// redirect from https never leads to http.
    public var allowsPlainHTTP: Bool

    public init(url: String, accept: String, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, allowsPlainHTTP: Bool = false) {
        self.allowsPlainHTTP = allowsPlainHTTP
        self.url = url
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }
}

public enum FetchResponse: Sendable, Equatable {
    /// A 2xx response, after any redirects: its body as sent (curl decodes no
    /// content coding; compression inside a token is the caller's), the
    /// final response's headers, and the URL it came from.
    case fetched(body: [UInt8], contentType: String?, etag: String?, lastModified: String?, finalURL: String)
    /// 304 to a request with If-None-Match or If-Modified-Since: what the caller holds is current.
    case notModified
}
