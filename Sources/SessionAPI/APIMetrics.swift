import Observability

/// What `veridoc serve` counts. Labels are closed sets (route names, status
/// codes, tenant ids from the config file), so no client can grow the series.
struct APIMetrics: Sendable {
    let registry: MetricsRegistry
    let requests: Counter
    let latency: Histogram
    let readerTokens: Counter
    let sessionsCreated: Counter

    init(registry: MetricsRegistry, tenants: [String]) {
        self.registry = registry
        requests = registry.counter("veridoc_api_requests_total", help: "Session API requests answered, by route and HTTP status.",
                                    labels: ["route", "status"])
        latency = registry.histogram("veridoc_api_request_seconds", help: "Time from a whole request to its response, by route.",
                                     labels: ["route"], buckets: Histogram.secondsBuckets)
        readerTokens = registry.counter("veridoc_api_reader_tokens_total", help: "Reader tokens signed, by tenant.", labels: ["tenant"])
        sessionsCreated = registry.counter("veridoc_api_sessions_created_total", help: "Sessions created, by tenant and flow.",
                                           labels: ["tenant", "flow"])
        for tenant in tenants { readerTokens.initialize(tenant) }
    }

    func record(route: String, status: UInt32, seconds: Double) {
        requests.increment(route, String(status))
        latency.observe(seconds, route)
    }
}
