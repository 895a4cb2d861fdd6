/// One complete response. Every response says `Cache-Control: no-store`
/// (the daemon adds it): nothing Veridoc answers may sit in a shared cache.
public struct HTTPResponse: Sendable, Equatable {
    public var status: UInt32
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// A body sent as it is made, instead of `body` (chunked).
    public var stream: HTTPStream?
    /// No response yet: it comes through `later` (then status, headers and body here mean nothing).
    public var later: HTTPLater?

    public init(status: UInt32, headers: [(name: String, value: String)] = [], body: [UInt8] = [], stream: HTTPStream? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
    }

    /// The answer comes through `later`, when someone completes it.
    public static func later(_ later: HTTPLater) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.later = later
        return response
    }

    public static func text(_ status: UInt32, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }

    public func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.stream === rhs.stream && lhs.later === rhs.later
            && lhs.headers.map { "\($0.name)\u{0}\($0.value)" } == rhs.headers.map { "\($0.name)\u{0}\($0.value)" }
    }
}
