import Foundation
import HTTPService
import StatusFetch
import TestSupport
import Testing

/// The bounds: body size, total time, redirects.
struct LimitTests {
    @Test func anAnnouncedBodyOverTheLimitIsRefused() throws {
        let probe = Probe()
        let daemon = try serve(probe: probe) { _ in HTTPResponse(status: 200, body: [UInt8](repeating: 0x61, count: 50 << 20)) }
        defer { daemon.stop() }
        var policy = insecurePolicy()
        policy.maxBodyBytes = 64 << 10
        let result = StatusFetcher(policy: policy).fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)/big", accept: "*/*"))
        #expect(result.error == .tooLarge(limit: 64 << 10))
        #expect(result.error?.code == "fetch.too_large")
        #expect(probe.requests == 1)
    }

    @Test func aStreamedBodyOverTheLimitIsCutOff() throws {
        // Endless, without Content-Length: only stopping the transfer ends it
        // (the server would go on to `StreamingServer.cap`).
        let server = try StreamingServer(total: nil)
        var policy = insecurePolicy()
        policy.maxBodyBytes = 1 << 20
        let result = StatusFetcher(policy: policy).fetch(FetchRequest(url: "http://127.0.0.1:\(server.port)/endless", accept: "*/*"))
        #expect(result.error == .tooLarge(limit: 1 << 20))
        let sent = try #require(server.bytesSent(), "the server's connection did not end")
        #expect(sent < StreamingServer.cap, "the fetcher read on past its limit")
    }

    @Test(arguments: [false, true])
    func aBodyOfExactlyTheLimitIsFetched(streamed: Bool) throws {
        let limit = 100_000
        var policy = insecurePolicy()
        policy.maxBodyBytes = limit
        let fetcher = StatusFetcher(policy: policy)
        if streamed {
            let exact = try StreamingServer(total: limit)
            #expect(fetcher.fetch(FetchRequest(url: "http://127.0.0.1:\(exact.port)/", accept: "*/*")).body?.count == limit)
            let over = try StreamingServer(total: limit + 1)
            #expect(fetcher.fetch(FetchRequest(url: "http://127.0.0.1:\(over.port)/", accept: "*/*")).error == .tooLarge(limit: limit))
        } else {
            let daemon = try serve { request in HTTPResponse(status: 200, body: [UInt8](repeating: 0x62, count: request.path == "/exact" ? limit : limit + 1)) }
            defer { daemon.stop() }
            #expect(fetcher.fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)/exact", accept: "*/*")).body?.count == limit)
            #expect(fetcher.fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)/over", accept: "*/*")).error == .tooLarge(limit: limit))
        }
    }

    @Test func aServerThatDoesNotAnswerTimesOut() throws {
        let gate = Gate()
        let probe = Probe()
        let daemon = try serve(probe: probe) { _ in
            gate.wait()
            return .text(200, "too late")
        }
        defer {
            gate.open()
            daemon.stop()
        }
        var policy = insecurePolicy()
        policy.totalTimeout = 2
        let result = StatusFetcher(policy: policy).fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)/slow", accept: "*/*"))
        #expect(result.error == .timeout)
        #expect(result.error?.code == "fetch.timeout")
        // It timed out waiting for the answer: the request got there.
        #expect(eventually(30) { probe.requests == 1 })
    }

    @Test(arguments: [(hops: 3, maxRedirects: 3), (hops: 4, maxRedirects: 3), (hops: 1, maxRedirects: 0), (hops: 0, maxRedirects: 0)])
    func redirectsAreCounted(hops: Int, maxRedirects: Int) throws {
        let probe = Probe()
        // /hop/n redirects to /hop/n+1 until n reaches `hops`.
        let daemon = try serve(probe: probe) { request in
            let n = Int(request.path.dropFirst("/hop/".count)) ?? 0
            return n < hops ? HTTPResponse(status: 302, headers: [("Location", "/hop/\(n + 1)")]) : .text(200, "hop \(n)")
        }
        defer { daemon.stop() }
        var policy = insecurePolicy()
        policy.maxRedirects = maxRedirects
        let result = StatusFetcher(policy: policy).fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)/hop/0", accept: "*/*"))
        if hops <= maxRedirects {
            #expect(result == .success(.fetched(body: Array("hop \(hops)".utf8), contentType: "text/plain; charset=utf-8", etag: nil, lastModified: nil,
                                                finalURL: "http://127.0.0.1:\(daemon.port)/hop/\(hops)")))
            #expect(probe.requests == hops + 1)
        } else {
            #expect(result.error == .redirects(limit: maxRedirects))
            #expect(probe.requests == maxRedirects + 1)
        }
    }

    @Test func aRedirectLoopEnds() throws {
        let probe = Probe()
        let result = try fetchOnce("/again", probe: probe) { _ in HTTPResponse(status: 308, headers: [("Location", "/again")]) }
        #expect(result.error == .redirects(limit: 3))
        #expect(probe.requests == 4)
    }

    @Test func aRedirectWithoutLocationIsItsStatus() throws {
        let result = try fetchOnce("/") { _ in HTTPResponse(status: 302) }
        #expect(result.error == .httpStatus(302))
    }
}
