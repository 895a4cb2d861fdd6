import Foundation
import StatusList

/// What a fetched list is: a list token of one kind, or an X.509 CRL.
public enum ListSource: Hashable, Sendable {
    case token(ListKind)
    case certificateRevocationList

    /// What the GET asks for.
    var mediaType: String {
        switch self {
        case .token(let kind): kind.mediaType
        case .certificateRevocationList: "application/pkix-crl"
        }
    }
}

/// One list as the cache knows it: what it is and the URI that named it,
/// byte for byte (a token's `sub` must be exactly that URI).
struct ListKey: Hashable, Sendable {
    let source: ListSource
    let uri: [UInt8]

    init(_ source: ListSource, _ uri: String) {
        self.source = source
        self.uri = Array(uri.utf8)
    }

    init(_ kind: ListKind, _ uri: String) {
        self.init(.token(kind), uri)
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
