import Foundation
import StatusList

/// One list as the cache knows it: its kind and the URI a reference named,
/// byte for byte (the token's `sub` must be exactly that URI).
struct ListKey: Hashable, Sendable {
    let kind: ListKind
    let uri: [UInt8]

    init(_ kind: ListKind, _ uri: String) {
        self.kind = kind
        self.uri = Array(uri.utf8)
    }

    /// The URI's host and port, lowercased, for the per-host share of fetch
    /// threads ("" when it has none). Worked out only for a fetch: a cached
    /// answer, every event's path, never parses the URI.
    var host: String {
        let components = URLComponents(string: uriText)
        return "\(components?.host?.lowercased() ?? ""):\(components?.port.map(String.init) ?? "")"
    }

    var uriText: String { String(decoding: uri, as: UTF8.self) }
}
