import Foundation
import HTTPService
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 client over a POSIX socket (URLSession is unreliable on
/// Linux): one request with `Connection: close`, reading until EOF.
public struct RawHTTP {
    public struct Response {
        public let status: Int
        public let headers: [String: String]
        public let body: String
    }

    public struct Failure: Error, CustomStringConvertible { public let description: String }

    public static func request(_ method: String, _ path: String, port: Int, headers: [(String, String)] = [], body: [UInt8] = [],
                               timeout: TimeInterval = 10) throws -> Response {
        let head = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        let request = Array("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\(head)Content-Length: \(body.count)\r\n\r\n".utf8) + body
        return try exchange(request, port: port, timeout: timeout)
    }

    /// Sends `request` as it is (any framing, e.g. chunked) and reads the response until EOF.
    public static func exchange(_ request: [UInt8], port: Int, timeout: TimeInterval = 10) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let connected = connectToLoopback(fd, port: port)
        guard connected == 0 else { throw Failure(description: "connect to \(port): errno \(errno)") }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The server may answer (413) and close before it has read everything.
            guard n > 0 else { if errno == EPIPE || errno == ECONNRESET { break }; throw Failure(description: "send: errno \(errno)") }
            sent += n
        }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 || (n < 0 && errno == ECONNRESET && !data.isEmpty) { break }
            guard n > 0 else { throw Failure(description: "recv: errno \(errno)") }
            data += buffer[..<n]
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no header end in \(text.prefix(200))") }
        let head = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ text: String) -> String {
        var rest = Substring(text)
        var out = ""
        while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
            let start = lineEnd.upperBound
            let utf8 = rest.utf8
            let end = utf8.index(start, offsetBy: size)
            out += String(rest[start..<end])
            // By bytes: "\r\n" is one Character, and dropping two would take the next chunk's first digit.
            rest = rest[(utf8.index(end, offsetBy: 2, limitedBy: utf8.endIndex) ?? utf8.endIndex)...]
        }
        return out
    }
}
