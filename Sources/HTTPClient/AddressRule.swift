#if canImport(Glibc)
import Glibc
#endif

/// Which IP addresses a strict fetch may connect to: globally routable
/// unicast only. A status list URI comes from a credential, so whoever
/// issued it could otherwise point the verifier at its own network
/// (a metadata service, an admin port on loopback, a neighbour on the LAN).
///
/// The rule is applied to the address a socket is about to be opened for,
/// not to the host name, so DNS answers that change between lookups and
/// redirects to other hosts meet it too. IPv6 forms that carry an IPv4
/// address the packet may end up at (IPv4-mapped, NAT64, 6to4) are judged by
/// that IPv4 address; the IETF's special-purpose and documentation blocks
/// (Teredo among them, whose endpoint cannot be judged) and everything
/// outside IPv6 global unicast (2000::/3) are refused.
public enum AddressRule {
    /// Whether a connection to this IPv4 address (4 bytes, network order) is allowed.
    public static func allows(ipv4 a: [UInt8]) -> Bool {
        guard a.count == 4 else { return false }
        switch (a[0], a[1], a[2]) {
        case (0, _, _): return false                              // 0.0.0.0/8 "this network", unspecified
        case (10, _, _): return false                             // 10/8 private
        case (100, 64...127, _): return false                     // 100.64/10 carrier-grade NAT
        case (127, _, _): return false                            // 127/8 loopback
        case (169, 254, _): return false                          // 169.254/16 link-local (cloud metadata)
        case (172, 16...31, _): return false                      // 172.16/12 private
        case (192, 0, 0), (192, 0, 2): return false               // IETF protocol assignments, documentation
        case (192, 88, 99): return false                          // 6to4 relay anycast
        case (192, 168, _): return false                          // 192.168/16 private
        case (198, 18...19, _): return false                      // 198.18/15 benchmarking
        case (198, 51, 100), (203, 0, 113): return false          // documentation
        case (224...255, _, _): return false                      // multicast, reserved, broadcast
        default: return true
        }
    }

    /// Whether a connection to this IPv6 address (16 bytes, network order) is allowed.
    public static func allows(ipv6 a: [UInt8]) -> Bool {
        guard a.count == 16 else { return false }
        // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64): the IPv4 address is where it goes.
        if a[0..<10].allSatisfy({ $0 == 0 }) && a[10] == 0xff && a[11] == 0xff { return allows(ipv4: Array(a[12..<16])) }
        if a[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return allows(ipv4: Array(a[12..<16])) }
        // 2002:aabb:ccdd::/48 (6to4) routes to the IPv4 address aa.bb.cc.dd.
        if a[0] == 0x20 && a[1] == 0x02 { return allows(ipv4: Array(a[2..<6])) }
        // 2001::/23 IETF protocol assignments (Teredo, benchmarking, ORCHID
        // among them; no status list lives there), 2001:db8::/32 and 3fff::/20 documentation.
        if a[0] == 0x20 && a[1] == 0x01 && (a[2] < 0x02 || (a[2] == 0x0d && a[3] == 0xb8)) { return false }
        if a[0] == 0x3f && a[1] == 0xff && a[2] < 0x10 { return false }
        // Global unicast is 2000::/3; the rest holds ::, ::1, the IPv4-compatible
        // form, fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local and ff00::/8 multicast.
        return a[0] & 0xe0 == 0x20
    }

    /// Whether a connection to this address literal (dotted IPv4 or IPv6 text) is allowed; false for text that is neither.
    public static func allows(_ literal: String) -> Bool {
        guard let bytes = parse(literal) else { return false }
        return bytes.count == 4 ? allows(ipv4: bytes) : allows(ipv6: bytes)
    }

    /// Whether the text is an IPv4 or IPv6 address rather than a name.
    public static func isAddress(_ literal: String) -> Bool { parse(literal) != nil }

    /// An address literal's bytes in network order (4 or 16), or nil.
    static func parse(_ literal: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, literal, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, literal, &v6) == 1 { return v6 }
        return nil
    }
}
