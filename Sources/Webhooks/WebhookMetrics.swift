import Observability

/// The dispatcher's metrics, labelled by tenant and endpoint (both from the
/// config, so the series are bounded).
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `veridoc_webhook_attempts_total` | counter | tenant, endpoint, result (delivered, retried, dead, gone, expired) |
/// | `veridoc_webhook_attempt_seconds` | histogram | tenant, endpoint |
/// | `veridoc_webhook_pending` | gauge | |
/// | `veridoc_webhook_endpoints_disabled` | gauge | |
///
/// `expired` counts deliveries that died without another attempt: pending a
/// week past their schedule (an endpoint removed from the config, or
/// disabled and never enabled again).
public struct WebhookMetrics: Sendable {
    let attempts: Counter
    let seconds: Histogram
    let pending: Gauge
    let disabledEndpoints: Gauge

    public init(registry: MetricsRegistry) {
        attempts = registry.counter("veridoc_webhook_attempts_total", help: "Webhook delivery attempts, by how they ended.",
                                    labels: ["tenant", "endpoint", "result"])
        seconds = registry.histogram("veridoc_webhook_attempt_seconds", help: "Time of one webhook delivery attempt, connecting to the last byte read.",
                                     labels: ["tenant", "endpoint"], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
        pending = registry.gauge("veridoc_webhook_pending", help: "Webhook deliveries not yet delivered or dead (sampled every few seconds).")
        disabledEndpoints = registry.gauge("veridoc_webhook_endpoints_disabled",
                                           help: "Webhook endpoints disabled by a 410 until veridoc webhooks enable (sampled every few seconds).")
    }
}
