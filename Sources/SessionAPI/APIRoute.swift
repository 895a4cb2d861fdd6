/// The routes `veridoc serve` answers, matched on the path's shape alone;
/// the method is checked after, so a known path with the wrong method is
/// 405, not 404. `label` is the route's name in metrics: a fixed set, never
/// a path a client made up. `/metrics` is not one of them: serve's metrics
/// are on its metrics listener (`observability.port`), not on the API port.
enum APIRoute: CaseIterable, Sendable {
    case sessions
    case session
    case sessionResponse
    /// The session's state changes as server-sent events.
    case sessionEvents
    case readerTokens
    /// The tenant's webhook verification keys (`v1a` signatures).
    case webhookKeys
    case health
    case ready
    case openAPI
    /// The browser client (`veridoc-client.v1.js`), at a path that names its version.
    case browserClient

    /// The path as the contract writes it.
    var template: String {
        switch self {
        case .sessions: "/v1/sessions"
        case .session: "/v1/sessions/{id}"
        case .sessionResponse: "/v1/sessions/{id}/response"
        case .sessionEvents: "/v1/sessions/{id}/events"
        case .readerTokens: "/v1/reader-tokens"
        case .webhookKeys: "/v1/webhook-keys"
        case .health: "/healthz"
        case .ready: "/readyz"
        case .openAPI: "/openapi.json"
        case .browserClient: "/client/v1/veridoc.js"
        }
    }

    /// The route of `path`, and the `{id}` segment where it has one (not yet
    /// checked to be a session id: an id that is not one is a 404 after the key).
    static func match(_ path: String) -> (route: APIRoute, id: Substring?)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "/v1/sessions/{id}/response" splits into "", "v1", "sessions", id, "response".
        if parts.count >= 4, parts.count <= 5, parts[1] == "v1", parts[2] == "sessions", !parts[3].isEmpty {
            if parts.count == 4 { return (.session, parts[3]) }
            if parts[4] == "response" { return (.sessionResponse, parts[3]) }
            if parts[4] == "events" { return (.sessionEvents, parts[3]) }
            return nil
        }
        guard let route = fixed[path] else { return nil }
        return (route, nil)
    }

    /// The routes without a parameter, by path: one lookup for every request.
    private static let fixed: [String: APIRoute] = Dictionary(
        uniqueKeysWithValues: allCases.filter { !$0.template.utf8.contains(UInt8(ascii: "{")) }.map { ($0.template, $0) })

    var methods: [String] {
        switch self {
        case .sessions: ["GET", "HEAD", "POST"]
        case .sessionResponse, .readerTokens: ["POST"]
        case .session, .webhookKeys, .health, .ready, .openAPI, .browserClient: ["GET", "HEAD"]
        case .sessionEvents: ["GET"]
        }
    }

    var label: String {
        switch self {
        case .sessions: "sessions"
        case .session: "session"
        case .sessionResponse: "session_response"
        case .sessionEvents: "session_events"
        case .readerTokens: "reader_tokens"
        case .webhookKeys: "webhook_keys"
        case .health: "healthz"
        case .ready: "readyz"
        case .openAPI: "openapi"
        case .browserClient: "client"
        }
    }

    /// The metrics label of requests no route matched.
    static let unmatchedLabel = "unmatched"
}
