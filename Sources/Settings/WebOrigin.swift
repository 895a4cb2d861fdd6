/// A web origin as browsers serialize it (HTML's "ASCII serialization of an
/// origin"): `scheme://host[:port]`, the scheme `https` (`http` only for a
/// loopback host, which browsers also count as a secure context), the host
/// in lowercase ASCII (an internationalized name in its `xn--` form), no
/// default port, no path, query, fragment or user. The Digital Credentials
/// API hands the wallet exactly that string, and the session transcript
/// hashes it, so a configured origin written any other way never matches and
/// every response from it would fail without a word.
public enum WebOrigin {
    /// Why `text` is not a serialized origin; nil when it is.
    public static func problem(_ text: String) -> String? {
        let schemes = [("https://", ":443"), ("http://", ":80")]
        guard let (scheme, defaultPort) = schemes.first(where: { text.hasPrefix($0.0) }) else { return "the scheme is not https:// (or http://)" }
        let rest = text.dropFirst(scheme.count)
        guard !rest.isEmpty else { return "no host" }
        guard rest.utf8.allSatisfy({ $0 < 0x80 }) else { return "a host beyond ASCII: write its xn-- form, as the browser reports it" }
        guard !rest.contains(where: { "/?#@\\".contains($0) }) else { return "a path, query, fragment or user: an origin is scheme://host[:port] alone" }
        guard rest.lowercased() == rest else { return "capital letters: the browser reports the host in lowercase" }
        guard !rest.hasSuffix(defaultPort) else { return "the scheme's default port: the browser leaves it out" }
        // The host runs to the port's colon; an IPv6 address, to its closing bracket.
        let hostEnd: Substring.Index
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return "an IPv6 address without its closing bracket" }
            hostEnd = rest.index(after: close)
        } else {
            hostEnd = rest.firstIndex(of: ":") ?? rest.endIndex
        }
        guard hostEnd > rest.startIndex else { return "no host" }
        if scheme == "http://" && !["localhost", "127.0.0.1", "[::1]"].contains(String(rest[..<hostEnd])) {
            return "http:// for a host other than a loopback one: the Digital Credentials API needs a secure context"
        }
        let port = rest[hostEnd...]
        guard port.isEmpty || port.first == ":" else { return "text after the host that is not a port" }
        if !port.isEmpty {
            let digits = port.dropFirst()
            guard !digits.isEmpty, !digits.hasPrefix("0"), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(digits), number <= 65_535 else {
                return "a port that is not a number from 1 to 65535"
            }
        }
        return nil
    }

    /// The host of a serialized origin (`problem` is nil for it): what runs
    /// from the scheme to the port, an IPv6 address with its brackets.
    public static func host(of origin: String) -> String? {
        guard problem(origin) == nil, let schemeEnd = origin.range(of: "://") else { return nil }
        let rest = origin[schemeEnd.upperBound...]
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") { return String(rest[...close]) }
        return String(rest.prefix { $0 != ":" })
    }
}
