import DemoKit
import Foundation
import HTTPService
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP front held (section 7, second table): `veridoc serve` with
/// `slowClients` connections that send a header byte a second and never end
/// their headers (slowloris), and `longPolls` connections of one tenant that
/// keep a long poll asked (`?wait=30`, again after each answer, after
/// `Retry-After` for a 429), all opened from one loop in this process. While
/// they are held, another tenant creates sessions and /healthz is asked, one
/// request after the other on a fresh connection each, and their latencies
/// (connect to last byte) are what is reported.
///
/// Every client is on 127.0.0.1, so serve's per-address cap is raised for
/// the run to stand for as many addresses; the other limits are serve's
/// defaults, and its connection limit is set so that every attacker's
/// connection fits (they are held, not refused).
struct FrontLoad {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// One attacker's connection, owned by the load's thread.
    private struct Client {
        var descriptor: Int32 = -1
        var slow: Bool
        /// The request bytes still to go (the whole long poll, or the slow client's opening).
        var pending: [UInt8] = []
        var received: [UInt8] = []
        /// When to send the next byte (slow) or the next poll (after a 429).
        var nextAt: TimeInterval = 0
        var waitingForAnswer = false
    }

    let port: Int
    let slowClients: Int
    let longPolls: Int
    let pollRequest: [UInt8]

    /// What the attackers saw, for the report.
    final class Counts: @unchecked Sendable {
        let lock = NSLock()
        var reconnects = 0
        var tooMany = 0
        var answered = 0
        var stop = false
        var connected = 0
    }

    let counts = Counts()

    init(port: Int, slowClients: Int, longPolls: Int, sessionPath: String, apiKey: String) {
        self.port = port
        self.slowClients = slowClients
        self.longPolls = longPolls
        pollRequest = Array("GET \(sessionPath)?wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(apiKey)\r\n\r\n".utf8)
    }

    /// Runs the attackers on a thread of their own until `stop`.
    func start() -> Thread {
        let thread = Thread { run() }
        thread.name = "front-attack"
        thread.start()
        return thread
    }

    func stop() { counts.lock.withLock { counts.stop = true } }

    private func now() -> TimeInterval { ProcessInfo.processInfo.systemUptime }

    private func connectNonBlocking() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return -1 }
        let result = connectToLoopback(fd, port: port)
        if result != 0 && errno != EINPROGRESS {
            close(fd)
            return -1
        }
        return fd
    }

    private func open(_ client: inout Client) {
        if client.descriptor >= 0 { close(client.descriptor) }
        client.descriptor = connectNonBlocking()
        client.received = []
        client.waitingForAnswer = false
        client.pending = client.slow ? Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8) : pollRequest
        client.nextAt = now()
    }

    private func run() {
        var clients = (0..<slowClients).map { _ in Client(slow: true) } + (0..<longPolls).map { _ in Client(slow: false) }
        for index in clients.indices { open(&clients[index]) }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var polls = [pollfd](repeating: pollfd(), count: clients.count)
        while !counts.lock.withLock({ counts.stop }) {
            let time = now()
            var connected = 0
            for index in clients.indices {
                var client = clients[index]
                defer { clients[index] = client }
                if client.descriptor < 0 { open(&client) }
                // Send what is due: the rest of a request, or the slow client's next byte.
                if client.nextAt <= time, client.descriptor >= 0 {
                    if client.pending.isEmpty && client.slow { client.pending = [UInt8(ascii: "a")] }
                    if client.pending.isEmpty && !client.slow && !client.waitingForAnswer { client.pending = pollRequest }
                    if !client.pending.isEmpty {
                        let sent = client.pending.withUnsafeBytes { send(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if sent > 0 {
                            client.pending.removeFirst(sent)
                            if client.pending.isEmpty {
                                if client.slow { client.nextAt = time + 1 } else { client.waitingForAnswer = true; client.nextAt = .infinity }
                            }
                        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN {
                            counts.lock.withLock { counts.reconnects += 1 }
                            open(&client)
                        }
                    }
                }
                if !client.pending.isEmpty || client.waitingForAnswer || client.slow { connected += 1 }
                polls[index] = pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0)
            }
            counts.lock.withLock { counts.connected = connected }
            _ = poll(&polls, nfds_t(polls.count), 50)
            for index in clients.indices where polls[index].revents != 0 {
                var client = clients[index]
                defer { clients[index] = client }
                let n = buffer.withUnsafeMutableBytes { recv(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    // Closed by serve (a deadline, an eviction, or after a response): open again, as an attacker would.
                    counts.lock.withLock { counts.reconnects += 1 }
                    open(&client)
                    continue
                }
                guard n > 0, !client.slow else { continue }
                client.received += buffer[..<n]
                while let answer = Self.response(in: &client.received) {
                    client.waitingForAnswer = false
                    if answer.status == 429 {
                        counts.lock.withLock { counts.tooMany += 1 }
                        client.nextAt = now() + TimeInterval(max(1, answer.retryAfter ?? 1))
                    } else {
                        counts.lock.withLock { counts.answered += 1 }
                        client.nextAt = now()
                    }
                }
            }
        }
        for client in clients where client.descriptor >= 0 { close(client.descriptor) }
    }

    /// One whole response taken off the front of `bytes` (its status and Retry-After), or nil until it is all there.
    static func response(in bytes: inout [UInt8]) -> (status: Int, retryAfter: Int?)? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == terminator }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = head.first else { return nil }
        let parts = statusLine.split(separator: " ")
        let status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        var length = 0
        var retryAfter: Int?
        for line in head.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0].lowercased() == "content-length" { length = Int(pair[1]) ?? 0 }
            if pair[0].lowercased() == "retry-after" { retryAfter = Int(pair[1]) }
        }
        guard bytes.count >= end + 4 + length else { return nil }
        bytes.removeFirst(end + 4 + length)
        return (status, retryAfter)
    }
}

/// A blocking HTTP/1.1 exchange on a fresh loopback connection (`Connection: close`), timed from connect to the last byte.
enum LoopbackHTTP {
    struct Answer {
        var status: Int
        var body: String
        var milliseconds: Double
    }

    static func request(_ method: String, _ path: String, port: Int, headers: [(String, String)] = [], body: String = "", timeout: Int = 10) throws -> Answer {
        let started = ProcessInfo.processInfo.systemUptime
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FrontLoad.Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let connected = connectToLoopback(fd, port: port)
        guard connected == 0 else { throw FrontLoad.Failure(description: "connect: errno \(errno)") }
        let head = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        let request = Array("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\(head)Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw FrontLoad.Failure(description: "send: errno \(errno)")
        }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            guard n > 0 else { throw FrontLoad.Failure(description: "recv: errno \(errno) after \(data.count) bytes") }
            data += buffer[..<n]
        }
        let milliseconds = (ProcessInfo.processInfo.systemUptime - started) * 1000
        var copy = data
        guard let answer = FrontLoad.response(in: &copy) else { throw FrontLoad.Failure(description: "no whole response") }
        let text = String(decoding: data, as: UTF8.self)
        let bodyText = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return Answer(status: answer.status, body: bodyText, milliseconds: milliseconds)
    }
}

/// Raises this process's open-file limit to its hard limit (children inherit it): the load holds thousands of sockets.
func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(limit.rlim_cur)
}

/// Two counts of connections to hold, scaled down together when the
/// open-file limit (raised first) leaves less room than both need, 1,024
/// descriptors kept for everything else; `scaled` says whether they were.
func fittedToOpenFiles(_ first: Int, _ second: Int) -> (first: Int, second: Int, files: Int, scaled: Bool) {
    let files = raiseOpenFileLimit()
    guard first + second > files - 1_024 else { return (first, second, files, false) }
    let room = max(0, files - 1_024)
    let scaledSecond = room * second / max(1, first + second)
    return (room - scaledSecond, scaledSecond, files, true)
}
