import Foundation
import StatusList

/// One list as the cache knows it: its kind and the URI a reference named,
/// byte for byte (the token's `sub` must be exactly that URI).
struct ListKey: Hashable, Sendable {
    let kind: ListKind
    let uri: [UInt8]
    /// The URI's host and port, lowercased, for the per-host share of fetch threads ("" when it has none).
    let host: String

    init(_ kind: ListKind, _ uri: String) {
        self.kind = kind
        self.uri = Array(uri.utf8)
        let components = URLComponents(string: uri)
        host = "\(components?.host?.lowercased() ?? ""):\(components?.port.map(String.init) ?? "")"
    }

    static func == (lhs: ListKey, rhs: ListKey) -> Bool { lhs.kind == rhs.kind && lhs.uri == rhs.uri }
    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(uri)
    }

    var uriText: String { String(decoding: uri, as: UTF8.self) }
}
