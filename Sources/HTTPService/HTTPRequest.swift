/// One request as the daemon read it: the body whole (within the daemon's
/// limit), header names lowercased.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without its query, percent-decoded by libmicrohttpd (the
    /// daemon refuses a target whose decoding would hide a NUL or a dot segment).
    public var path: String
    /// Query arguments, decoded; a name without `=` maps to "".
    public var query: [String: String]
    /// Header names are case-insensitive (RFC 9110), so they are kept lowercased;
    /// a repeated header keeps its last value.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
