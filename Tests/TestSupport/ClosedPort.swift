import Glibc

/// A TCP socket bound to a free port of 127.0.0.1.
public enum LoopbackSocket {
    public struct SocketError: Error {
        public let call: String
        public let errno: Int32
    }

    /// The socket and its port; listening with `backlog`, or only bound when nil.
    public static func bind(listening backlog: Int32?) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, length) == 0 && (backlog.map { listen(descriptor, $0) == 0 } ?? true) && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            let failure = errno
            close(descriptor)
            throw SocketError(call: "bind/listen", errno: failure)
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A loopback TCP port that refuses connections: bound, never listening,
/// and held until `close`, so that no other test's server can take it
/// meanwhile (a port freed by stopping a server could be handed out again).
public final class ClosedPort {
    public let port: Int
    private var descriptor: Int32

    public init() throws {
        (descriptor, port) = try LoopbackSocket.bind(listening: nil)
    }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
