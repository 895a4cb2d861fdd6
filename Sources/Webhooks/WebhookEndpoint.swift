import Foundation
import HTTPClient

/// One tenant's receiver, its secrets and key loaded (`tenants[].webhooks`).
public struct WebhookEndpoint: Sendable {
    public let tenant: String
    public let id: String
    public let url: String
    public let eventTypes: [String]
    public let signer: WebhookSigner
    public let maxConcurrency: Int
    public let maxPerSecond: Int

    public init(tenant: String, id: String, url: String, eventTypes: [String], signer: WebhookSigner, maxConcurrency: Int, maxPerSecond: Int) {
        self.tenant = tenant
        self.id = id
        self.url = url
        self.eventTypes = eventTypes
        self.signer = signer
        self.maxConcurrency = maxConcurrency
        self.maxPerSecond = maxPerSecond
    }

    /// Why `url` may not be a webhook target, or nil: an absolute https URL
    /// (http only when insecure targets are allowed) with a host, no user
    /// name or password and no fragment, and, where the host is an address,
    /// a public one (the address actually connected to is checked again at
    /// each delivery, whatever the name resolves to).
    public static func problem(url: String, allowInsecure: Bool) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty else {
            return "not an absolute URL with a host"
        }
        guard scheme == "https" || (allowInsecure && scheme == "http") else {
            return allowInsecure ? "http or https is required" : "https is required (http only with webhooks.allowInsecureTargets, for tests)"
        }
        guard components.user == nil, components.password == nil else { return "a user name or password in the URL would be sent to every redirect target and log; not allowed" }
        guard components.fragment == nil else { return "a fragment is never sent; not allowed" }
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let name = literal.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        if !allowInsecure, (AddressRule.isAddress(literal) && !AddressRule.allows(literal)) || name == "localhost" || name.hasSuffix(".localhost") {
            return "a private, loopback or link-local address (allowed only with webhooks.allowInsecureTargets)"
        }
        return nil
    }
}
