import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// connect(2) of `descriptor` to 127.0.0.1:`port`, the one address every
/// local client of Veridoc's listeners uses (benches, tests, readiness
/// waits): 0, or -1 with `errno` set (EINPROGRESS on a non-blocking socket).
public func connectToLoopback(_ descriptor: Int32, port: Int) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}
