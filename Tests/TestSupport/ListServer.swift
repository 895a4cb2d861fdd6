import Foundation
import HTTPService
import Synchronization

/// An issuer's list server on 127.0.0.1 for tests: each path answers what
/// the test put there (a token, a status, a redirect), counts its requests,
/// and may be held shut until the test opens it (a slow server). Answers
/// 304 to a request whose If-None-Match names the current ETag.
public final class ListServer: Sendable {
    public struct Answer: Sendable {
        public var status: UInt32
        public var contentType: String?
        public var body: [UInt8]
        public var etag: String?
        public var location: String?

        public init(status: UInt32 = 200, contentType: String? = nil, body: [UInt8] = [], etag: String? = nil, location: String? = nil) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.etag = etag
            self.location = location
        }
    }

    private struct State {
        // Keyed by the path's bytes: a test of byte-exact URIs must not find
        // `/K` and `/\u{212A}` (Kelvin sign) the same path, as String equality would.
        var answers: [[UInt8]: Answer] = [:]
        var requests: [[UInt8]: Int] = [:]
        var held: Set<[UInt8]> = []
        var notModified = 0
    }

    /// What the handler threads and the test share.
    private final class Shared: @unchecked Sendable {
        let state = Mutex(State())
        let released = NSCondition()

        func wake() {
            released.lock()
            released.broadcast()
            released.unlock()
        }
    }

    private let shared = Shared()
    private let daemon: HTTPDaemon
    public let port: Int

    public init(tls: HTTPDaemon.TLS? = nil) throws {
        let shared = self.shared
        daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(connectionLimit: 256), tls: tls) { request in
            let path = Array(request.path.utf8)
            let state = shared
            state.state.withLock { $0.requests[path, default: 0] += 1 }
            // A held path answers once the test releases it (at most a minute later, so a failing test still ends).
            let deadline = Date().addingTimeInterval(60)
            state.released.lock()
            while state.state.withLock({ $0.held.contains(path) }) && state.released.wait(until: deadline) {}
            state.released.unlock()
            guard let answer = state.state.withLock({ $0.answers[path] }) else { return HTTPResponse(status: 404) }
            if let etag = answer.etag, request.headers["if-none-match"] == etag {
                state.state.withLock { $0.notModified += 1 }
                return HTTPResponse(status: 304, headers: [("ETag", etag)])
            }
            var headers: [(name: String, value: String)] = []
            if let type = answer.contentType { headers.append(("Content-Type", type)) }
            if let etag = answer.etag { headers.append(("ETag", etag)) }
            if let location = answer.location { headers.append(("Location", location)) }
            return HTTPResponse(status: answer.status, headers: headers, body: answer.body)
        }
        port = daemon.port
    }

    /// `http://127.0.0.1:PORT/path` (https with TLS).
    public func url(_ path: String, scheme: String = "http") -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }

    public func put(_ path: String, _ answer: Answer) {
        shared.state.withLock { $0.answers[Array(path.utf8)] = answer }
    }

    /// `body` as a list token of `mediaType`, with an ETag.
    public func publish(_ path: String, _ body: [UInt8], mediaType: String, etag: String? = nil) {
        put(path, Answer(contentType: mediaType, body: body, etag: etag))
    }

    public func requests(_ path: String) -> Int { shared.state.withLock { $0.requests[Array(path.utf8)] ?? 0 } }

    /// 304 answers given so far.
    public var notModifiedCount: Int { shared.state.withLock { $0.notModified } }

    /// Requests for `path` wait until `release`.
    public func hold(_ path: String) { shared.state.withLock { _ = $0.held.insert(Array(path.utf8)) } }

    public func release(_ path: String) {
        shared.state.withLock { _ = $0.held.remove(Array(path.utf8)) }
        shared.wake()
    }

    public func stop() {
        shared.state.withLock { $0.held.removeAll() }
        shared.wake()
        daemon.stop()
    }
}
