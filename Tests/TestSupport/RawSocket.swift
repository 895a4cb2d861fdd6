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

    /// What the server sends until it has sent `marker` (or closed the
    /// connection, or `timeout` passed): all of it, read so far.
    public func receive(until marker: String, within timeout: TimeInterval) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(min(left, 1) * 1_000)) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { break }
            if n > 0 { received += buffer[..<n] }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends a byte every 0.2 s (the wait is for the server to close, which
    /// ends the loop), for at most 15 s: a slow client staying within any idle
    /// timeout. True once the server has closed the connection.
    public func dribbleUntilClosed() -> Bool {
        for _ in 0..<75 {
            if !send("a") || closedByServer(within: 0.2) { return true }
        }
        return false
    }

    /// Holds `cap` connections from 127.0.0.1, each with part of a request,
    /// and opens one more. Whether the server closed that one at once (within
    /// 10 s), and whether, after one of the held ones closed, a request is
    /// answered 200 again (within 10 s).
    public static func perAddressCap(_ cap: Int, port: Int) throws -> (oneMoreClosed: Bool, answersAgain: Bool) {
        var held = try (0..<cap).map { _ in try RawSocket(port: port) }
        for socket in held { socket.send("GET /healthz HTTP/1.1\r\n") }
        let oneMore = try RawSocket(port: port)
        let oneMoreClosed = oneMore.closedByServer(within: 10)
        held.removeFirst()
        let answersAgain = eventually(30) { (try? RawHTTP.request("GET", "/healthz", port: port, timeout: 2))?.status == 200 }
        return (oneMoreClosed, answersAgain)
    }
}
