import Foundation
import MDoc

/// A tenant's own retention policy (config `maxRetentionDays`,
/// `retentionDefaults`). It only states the settings; how they combine with
/// a request's intent is decided in the Retention module, next to the code
/// that acts on the outcome.
public struct TenantRetention: Sendable, Equatable {
    /// Upper bound on any value's retention, in days; nil = no cap.
    public let maxDays: Int?
    /// Intents for elements whose request stated none (see docs/retention.md).
    public let defaults: [Default]

    public struct Default: Sendable, Equatable {
        /// A namespace, or "*" for any namespace (then `element` must be "*").
        public let namespace: String
        /// An element identifier, or "*" for every element of `namespace`.
        public let element: String
        public let retention: Retention
    }

    public static let none = TenantRetention(maxDays: nil, defaults: [])

    public init(maxDays: Int?, defaults: [Default]) {
        self.maxDays = maxDays
        self.defaults = defaults
    }

    /// The most specific default: the exact element, then the namespace's
    /// "*", then "*"/"*".
    /// Names match by their bytes, as everywhere a disclosed name is matched.
    public func defaultRetention(namespace: String, element: String) -> Retention? {
        defaults.first { $0.namespace.hasSameUTF8(as: namespace) && $0.element.hasSameUTF8(as: element) }?.retention
            ?? defaults.first { $0.namespace.hasSameUTF8(as: namespace) && $0.element == "*" }?.retention
            ?? defaults.first { $0.namespace == "*" && $0.element == "*" }?.retention
    }
}
