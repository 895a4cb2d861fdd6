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

/// One list as the cache knows it: what it is, the URI that named it, byte
/// for byte (a token's `sub` must be exactly that URI), and whose it must
/// be (the SHA-256 of the IACA a token must chain to, or of the certificate
/// that must have signed a CRL).
///
/// The issuer is part of the key because the URI is not proof of whose list
/// it is: another issuer the tenant trusts may name the same URI. Were the
/// two to share one entry, that issuer's documents, whose check of the list
/// fails, would drop the list and fail its URI for the other issuer's
/// documents too, again after every refetch.
struct ListKey: Hashable, Sendable {
    let source: ListSource
    let uri: [UInt8]
    let issuer: [UInt8]

    init(_ source: ListSource, _ uri: String, issuer: [UInt8]) {
        self.source = source
        self.uri = Array(uri.utf8)
        self.issuer = issuer
    }

    init(_ kind: ListKind, _ uri: String, issuer: [UInt8]) {
        self.init(.token(kind), uri, issuer: issuer)
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
