/// The `webhooks` section: how the worker delivers outcome events to the
/// endpoints tenants name (`tenants[].webhooks`, docs/webhooks.md). Endpoint
/// URLs come from the operator, but a receiver is still someone else's
/// server: deliveries are bounded in time and in what is read back, go to
/// public addresses over HTTPS only, and never follow a redirect.
public struct WebhookSettings: Sendable, Equatable {
    /// `allowInsecureTargets`, `caFile`, the timeouts (of one delivery) and
    /// `maxResponseBytes` (what is read of a receiver's answer; the rest is not).
    public var http = OutboundHTTPSettings(maxResponseBytes: 16 << 10)
    /// Threads sending deliveries, all endpoints together.
    public var deliveryThreads = 8
    /// Seconds after each failed attempt before the next one (jittered by up
    /// to a tenth); after the last, the delivery is dead. Standard Webhooks'
    /// example schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
    public var retrySchedule = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400]
    /// How long delivered and dead deliveries are listed before they are removed.
    public var keepFinishedHours = 168

    /// The most retries a schedule may hold, and the longest wait between two.
    public static let maxRetries = 20
    public static let maxRetryDelaySeconds = 604_800

    public init() {}

    init(_ section: SettingsObject?) throws(ConfigError) {
        guard var section else { return }
        try http.read(&section, insecureKey: "allowInsecureTargets", timeouts: 1...120, responseBytes: 0...(1 << 20))
        deliveryThreads = try section.integer("deliveryThreads", range: 1...256) ?? deliveryThreads
        if let schedule = try section.array("retrySchedule") {
            let delays = schedule.compactMap { $0.integerValue.flatMap { Int(exactly: $0) } }
            guard delays.count == schedule.count, delays.count <= Self.maxRetries, delays.allSatisfy({ (1...Self.maxRetryDelaySeconds).contains($0) }) else {
                throw ConfigError("\(section.setting("retrySchedule")): up to \(Self.maxRetries) delays in seconds, each from 1 to \(Self.maxRetryDelaySeconds)")
            }
            retrySchedule = delays
        }
        keepFinishedHours = try section.integer("keepFinishedHours", range: 1...87_600) ?? keepFinishedHours
        try section.finish()
    }
}
