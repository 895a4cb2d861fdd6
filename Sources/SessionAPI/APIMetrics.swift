import Observability
import Storage

/// What `veridoc serve` counts. Labels are closed sets (route names, status
/// codes, flows), so no client can grow the series. No label names a tenant:
/// the metrics listener answers without credentials, and tenant ids are the
/// operator's customers (per-tenant counts are in the sessions table).
struct APIMetrics: Sendable {
    let registry: MetricsRegistry
    let requests: Counter
    let latency: Histogram
    /// Long polls apart: their time is the client's wait, not serve's work.
    let longPollLatency: Histogram
    let readerTokens: Counter
    let sessionsCreated: Counter
    let pollsRefused: Counter
    let pollsWaiting: Gauge
    /// Server-sent event streams open now.
    let eventStreams: Gauge
    /// The soonest expiry of a tenant's web reader certificate, as a Unix time.
    let webReaderExpiry: Gauge
    /// Accepted responses whose request event waits for the broker (`SubmissionRelay`).
    let submissionsWaiting: Gauge
    let submissionsRelayed: Counter
    /// Relay passes that failed (the database away, a statement refused).
    let relayFailures: Counter
    /// 1 while serve's session listener has its LISTEN in place.
    let listenerUp: Gauge
    /// Sessions ended as failed, by reason.
    let sessionsFailed: Counter
    let verifierExpiry: Gauge

    init(registry: MetricsRegistry) {
        self.registry = registry
        requests = registry.counter("veridoc_api_requests_total", help: "Session API requests answered, by route and HTTP status.",
                                    labels: ["route", "status"])
        latency = registry.histogram("veridoc_api_request_seconds", help: "Time from a whole request to its response, by route.",
                                     labels: ["route"], buckets: Histogram.secondsBuckets)
        submissionsWaiting = registry.gauge("veridoc_api_submissions_waiting",
                                            help: "Accepted responses whose request event has not reached the broker yet (all serve processes; sampled each relay pass).")
        submissionsRelayed = registry.counter("veridoc_api_submissions_relayed_total",
                                              help: "Request events the relay delivered after their submit could not.")
        submissionsRelayed.initialize()
        relayFailures = registry.counter("veridoc_api_relay_failures_total", help: "Passes of the submission relay that failed (PostgreSQL unreachable or a statement refused).")
        relayFailures.initialize()
        listenerUp = registry.gauge("veridoc_api_session_listener_up",
                                    help: "1 while serve LISTENs for session changes; 0: long polls and event streams fall back to reading every 10 s.")
        sessionsFailed = registry.counter("veridoc_api_sessions_failed_total", help: "Sessions ended as failed by this process's relay, by reason.",
                                          labels: ["reason"])
        sessionsFailed.initialize(SessionsTable.FailureReason.verificationTimeout.rawValue)
        longPollLatency = registry.histogram("veridoc_api_long_poll_seconds",
                                             help: "Time from a long poll (GET /v1/sessions/{id}?wait=) to its answer: the outcome, or the wait's end.",
                                             buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60])
        readerTokens = registry.counter("veridoc_api_reader_tokens_total", help: "Reader tokens signed.")
        sessionsCreated = registry.counter("veridoc_api_sessions_created_total", help: "Sessions created, by flow.",
                                           labels: ["flow"])
        readerTokens.initialize()
        pollsRefused = registry.counter("veridoc_api_long_polls_refused_total",
                                        help: "Long polls answered 429 because their tenant, or all tenants, had as many waiting as allowed.")
        pollsRefused.initialize()
        pollsWaiting = registry.gauge("veridoc_api_long_polls_waiting", help: "Long polls (GET /v1/sessions/{id}?wait=) waiting now, all tenants together.")
        pollsWaiting.set(0)
        eventStreams = registry.gauge("veridoc_api_event_streams_open", help: "Session event streams (GET /v1/sessions/{id}/events) open now, all tenants together.")
        eventStreams.set(0)
        webReaderExpiry = registry.gauge("veridoc_web_reader_certificate_expiry_timestamp_seconds",
                                         help: "Of each tenant's web reader identities the last to expire, the soonest such expiry (Unix time); absent without one. Web sessions that would outlive it are refused.")
        verifierExpiry = registry.gauge("veridoc_openid4vp_verifier_certificate_expiry_timestamp_seconds",
                                        help: "Of each tenant's OpenID4VP verifier identities the last to expire, the soonest such expiry (Unix time); absent without one. OpenID4VP sessions that would outlive it are refused.")
    }

    func record(route: String, status: UInt32, seconds: Double, longPoll: Bool = false) {
        requests.increment(route, String(status))
        if longPoll { longPollLatency.observe(seconds) } else { latency.observe(seconds, route) }
    }
}
