/// The routes `veridoc serve` answers, matched on the path alone; the
/// method is checked after, so a known path with the wrong method is 405,
/// not 404. `label` is the route's name in metrics: a fixed set, never a
/// path a client made up.
enum APIRoute: String, CaseIterable, Sendable {
    case readerTokens = "/v1/reader-tokens"
    case health = "/healthz"
    case ready = "/readyz"
    case metrics = "/metrics"
    case openAPI = "/openapi.json"

    init?(path: String) {
        self.init(rawValue: path)
    }

    var methods: [String] {
        switch self {
        case .readerTokens: ["POST"]
        case .health, .ready, .metrics, .openAPI: ["GET", "HEAD"]
        }
    }

    /// Routes under /v1 take a tenant's API key; the probes, metrics and the
    /// contract are for the operator's network and carry nothing of a tenant's.
    var needsKey: Bool { rawValue.hasPrefix("/v1/") }

    var label: String {
        switch self {
        case .readerTokens: "reader_tokens"
        case .health: "healthz"
        case .ready: "readyz"
        case .metrics: "metrics"
        case .openAPI: "openapi"
        }
    }

    /// The metrics label of requests no route matched.
    static let unmatchedLabel = "unmatched"
}
