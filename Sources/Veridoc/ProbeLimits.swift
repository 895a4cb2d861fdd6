import HTTPService
import Settings

/// The limits of the metrics and probe listener (`observability.*`), the worker's and serve's alike.
enum ProbeLimits {
    static func of(_ settings: ObservabilitySettings) -> HTTPDaemon.Limits {
        HTTPDaemon.Limits(maxBodyBytes: 0, connectionLimit: UInt32(settings.maxConnections), idleTimeoutSeconds: 10,
                          connectionsPerAddress: UInt32(settings.maxConnectionsPerAddress),
                          headerTimeoutSeconds: Double(settings.headerTimeoutSeconds), bodyTimeoutSeconds: Double(settings.bodyTimeoutSeconds))
    }
}
