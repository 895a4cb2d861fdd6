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

    var uriText: String { String(decoding: uri, as: UTF8.self) }
}
