/// What a `/readyz` answers: 200 when ready, else 503 with the reason.
public struct HTTPReadiness: Sendable, Equatable {
    public var ready: Bool
    /// A short, fixed explanation (no data from requests or events).
    public var reason: String

    public init(ready: Bool, reason: String) {
        self.ready = ready
        self.reason = reason
    }

    public static let ready = HTTPReadiness(ready: true, reason: "ready")
}
