import Observability

/// The dispatcher's metrics, labelled by tenant and endpoint (both from the
/// config, so the series are bounded).
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `veridoc_webhook_attempts_total` | counter | tenant, endpoint, result (delivered, retried, dead, gone) |
/// | `veridoc_webhook_attempt_seconds` | histogram | tenant, endpoint |
/// | `veridoc_webhook_pending` | gauge | |
public struct WebhookMetrics: Sendable {
    let attempts: Counter
    let seconds: Histogram
    let pending: Gauge

    public init(registry: MetricsRegistry) {
        attempts = registry.counter("veridoc_webhook_attempts_total", help: "Webhook delivery attempts, by how they ended.",
                                    labels: ["tenant", "endpoint", "result"])
        seconds = registry.histogram("veridoc_webhook_attempt_seconds", help: "Time of one webhook delivery attempt, connecting to the last byte read.",
                                     labels: ["tenant", "endpoint"], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
        pending = registry.gauge("veridoc_webhook_pending", help: "Webhook deliveries not yet delivered or dead (sampled every few seconds).")
    }
}
