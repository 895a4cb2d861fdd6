import Foundation
import HTTPService
#if canImport(Glibc)
import Glibc
#endif

/// One TCP connection to 127.0.0.1 held open by a test: to send part of a
/// request (a slow client) and to see whether the server closed it.
public final class RawSocket {
    public let descriptor: Int32

    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
        let connected = connectToLoopback(descriptor, port: port)
        guard connected == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw TestFailure("connect to \(port): errno \(code)")
        }
    }

    deinit { Glibc.close(descriptor) }

    /// False once the server has closed the connection (the send fails).
    @discardableResult
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Waits up to `timeout` for the server to end the connection (end of stream or reset); whatever it sent before is read and dropped.
    public func closedByServer(within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(left, 1) * 1_000))
            guard ready > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
        }
    }
}
