import Foundation
import HTTPService
import StatusFetch
import TestSupport
import Testing

/// What comes back from a server that answers: bodies, headers, statuses,
/// conditional requests, redirects and TLS.
struct ResponseTests {
    @Test func fetchesBodyAndHeadersOverVerifiedTLS() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let body = Array("a status list token".utf8) + [0x00, 0xff, 0x1f, 0x8b]
        let probe = Probe()
        let daemon = try serve(tls: pki.serverTLS(), probe: probe) { _ in
            // Header names in odd case: HTTP header names are case-insensitive.
            HTTPResponse(status: 200, headers: [("content-TYPE", "application/statuslist+cwt"), ("eTag", "\"v1\""),
                                                ("LAST-modified", "Tue, 01 Jul 2025 10:00:00 GMT"), ("Content-Encoding", "gzip")], body: body)
        }
        defer { daemon.stop() }
        let url = "https://127.0.0.1:\(daemon.port)/lists/1"
        let fetcher = StatusFetcher(policy: strictLoopbackPolicy(caFile: pki.caFile))
        let result = fetcher.fetch(FetchRequest(url: url, accept: "application/statuslist+cwt"))
        // Content-Encoding is not undone: the body is the bytes sent.
        #expect(result == .success(.fetched(body: body, contentType: "application/statuslist+cwt", etag: "\"v1\"",
                                            lastModified: "Tue, 01 Jul 2025 10:00:00 GMT", finalURL: url)))
        let sent = probe.lastHeaders
        #expect(sent["accept"] == "application/statuslist+cwt")
        #expect(sent["user-agent"] == "veridoc")
        #expect(sent["accept-encoding"] == nil && sent["cookie"] == nil && sent["if-none-match"] == nil && sent["authorization"] == nil)
    }

    @Test func allowInsecureAllowsPlainHTTPToLoopback() throws {
        let daemon = try serve { _ in .text(200, "plain") }
        defer { daemon.stop() }
        let url = "http://127.0.0.1:\(daemon.port)/list"
        let result = StatusFetcher(policy: insecurePolicy()).fetch(FetchRequest(url: url, accept: "*/*"))
        #expect(result == .success(.fetched(body: Array("plain".utf8), contentType: "text/plain; charset=utf-8", etag: nil, lastModified: nil, finalURL: url)))
    }

    @Test func conditionalRequestGetsNotModified() throws {
        let probe = Probe()
        let daemon = try serve(probe: probe) { request in
            request.header("If-None-Match") == "\"v7\"" ? HTTPResponse(status: 304, headers: [("ETag", "\"v7\"")])
                : HTTPResponse(status: 200, headers: [("ETag", "\"v7\"")], body: [1, 2, 3])
        }
        defer { daemon.stop() }
        let fetcher = StatusFetcher(policy: insecurePolicy())
        let url = "http://127.0.0.1:\(daemon.port)/list"
        #expect(fetcher.fetch(FetchRequest(url: url, accept: "*/*", ifNoneMatch: "\"v7\"", ifModifiedSince: "Tue, 01 Jul 2025 10:00:00 GMT"))
                == .success(.notModified))
        #expect(probe.lastHeaders["if-modified-since"] == "Tue, 01 Jul 2025 10:00:00 GMT")
        #expect(fetcher.fetch(FetchRequest(url: url, accept: "*/*", ifNoneMatch: "\"v6\"")).body == [1, 2, 3])
        #expect(probe.requests == 2)
    }

    @Test func notModifiedToAnUnconditionalRequestIsAStatus() throws {
        let result = try fetchOnce("/list") { _ in HTTPResponse(status: 304) }
        #expect(result.error == .httpStatus(304))
    }

    @Test(arguments: [404, 500, 403, 300, 503])
    func otherStatusesAreErrors(_ status: Int) throws {
        let result = try fetchOnce("/person-4711") { _ in HTTPResponse(status: UInt32(status), body: Array("an error page".utf8)) }
        #expect(result.error == .httpStatus(status))
        #expect(result.error?.code == "fetch.http_status")
    }

    @Test func redirectsToHTTPSAreFollowedAndOnlyTheFinalHeadersCount() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let tls = try pki.serverTLS()
        let final = try serve(tls: tls) { request in
            request.path == "/list" ? HTTPResponse(status: 200, headers: [("Content-Type", "application/statuslist+cwt")], body: [9, 8, 7])
                : .text(404, "no")
        }
        defer { final.stop() }
        let finalURL = "https://127.0.0.1:\(final.port)/list"
        let first = try serve(tls: tls) { request in
            switch request.path {
            // A relative redirect on the same server, then one to another server.
            case "/start": HTTPResponse(status: 301, headers: [("Location", "/moved"), ("ETag", "\"from-the-redirect\""), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")])
            case "/moved": HTTPResponse(status: 307, headers: [("Location", finalURL), ("Content-Type", "text/html")])
            default: .text(404, "no")
            }
        }
        defer { first.stop() }
        let result = StatusFetcher(policy: strictLoopbackPolicy(caFile: pki.caFile))
            .fetch(FetchRequest(url: "https://127.0.0.1:\(first.port)/start", accept: "application/statuslist+cwt"))
        #expect(result == .success(.fetched(body: [9, 8, 7], contentType: "application/statuslist+cwt", etag: nil, lastModified: nil, finalURL: finalURL)))
    }

    @Test func untrustedCertificateIsATLSError() throws {
        try withUnreachedTLSServer { _, daemon, probe in
            // No caFile: the system store, which does not hold the test CA.
            let result = StatusFetcher(policy: strictLoopbackPolicy(caFile: nil)).fetch(FetchRequest(url: "https://127.0.0.1:\(daemon.port)/list", accept: "*/*"))
            #expect(result.error?.code == "fetch.tls", "\(String(describing: result))")
            #expect(probe.requests == 0)
        }
    }

    @Test func certificateForAnotherHostIsATLSError() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let probe = Probe()
        let daemon = try serve(tls: pki.serverTLS(dnsNames: ["status.example"], ipAddresses: [[192, 0, 2, 1]]), probe: probe) { _ in .text(200, "never") }
        defer { daemon.stop() }
        let result = StatusFetcher(policy: strictLoopbackPolicy(caFile: pki.caFile)).fetch(FetchRequest(url: "https://127.0.0.1:\(daemon.port)/list", accept: "*/*"))
        #expect(result.error?.code == "fetch.tls", "\(String(describing: result))")
        #expect(probe.requests == 0)
    }
}
