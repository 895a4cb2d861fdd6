import Settings
import Storage

/// Every tenant's webhook endpoints and how they are delivered to
/// (`webhooks`): what the worker's transactions record deliveries from and
/// its dispatcher sends them by.
public struct WebhookDirectory: Sendable {
    public let endpoints: [WebhookEndpoint]
    public let settings: WebhookSettings
    /// `webhooks.caFile`, resolved against the config's folder and read as PEM once.
    public let caFile: String?

    public init(endpoints: [WebhookEndpoint], settings: WebhookSettings, caFile: String? = nil) {
        self.endpoints = endpoints
        self.settings = settings
        self.caFile = caFile
    }

    /// No endpoints: nothing is recorded or sent.
    public static let none = WebhookDirectory(endpoints: [], settings: WebhookSettings())

    public var isEmpty: Bool { endpoints.isEmpty }

    /// The deliveries one event makes: a row for each of its tenant's
    /// endpoints that receive its type. Tenants are matched by their bytes.
    public func deliveries(tenant: String, eventType: String, webhookID: String, eventID: String, payload: String,
                           hasClaims: Bool) -> [WebhookDeliveriesTable.Row] {
        endpoints.filter { $0.tenant.utf8.elementsEqual(tenant.utf8) && $0.eventTypes.contains(eventType) }.map { endpoint in
            WebhookDeliveriesTable.Row(tenant: endpoint.tenant, endpoint: endpoint.id, webhookID: webhookID, eventID: eventID,
                                       eventType: eventType, payload: payload, hasClaims: hasClaims)
        }
    }

    public var retryPolicy: RetryPolicy {
        RetryPolicy(schedule: settings.retrySchedule, maxDelaySeconds: WebhookSettings.maxRetryDelaySeconds)
    }
}
