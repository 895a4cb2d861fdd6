import Foundation
import HTTPService
import StatusFetch
import TestSupport
import Testing

/// What the strict policy refuses before or instead of talking to a server,
/// and that a refused URL never reaches the server. Every server here
/// counts its requests; none may see one.
struct RefusalTests {
    @Test func plainHTTPIsRefusedWithoutContactingTheServer() throws {
        let probe = Probe()
        let daemon = try serve(probe: probe) { _ in .text(200, "never") }
        defer { daemon.stop() }
        // The production policy, and the test one that would let 127.0.0.1 through: the scheme alone decides.
        for policy in [FetchPolicy(), strictLoopbackPolicy(caFile: nil)] {
            let result = StatusFetcher(policy: policy).fetch(FetchRequest(url: "http://127.0.0.1:\(daemon.port)/list", accept: "*/*"))
            #expect(result.error == .refusedScheme("http"))
            #expect(result.error?.code == "fetch.refused_scheme")
        }
        #expect(probe.requests == 0)
    }

    @Test func loopbackHTTPSIsRefusedWithoutContactingTheServer() throws {
        try withUnreachedTLSServer { pki, daemon, probe in
            // The CA is trusted: were the address allowed, the handler would answer.
            let fetcher = StatusFetcher(policy: FetchPolicy(connectTimeout: 30, totalTimeout: 60, caFile: pki.caFile))
            // The literal, a name that resolves to it, and spellings of it curl understands.
            for url in ["https://127.0.0.1:\(daemon.port)/list", "https://localhost:\(daemon.port)/list", "https://2130706433:\(daemon.port)/list",
                        "https://0x7f.1:\(daemon.port)/list", "https://[::ffff:127.0.0.1]:\(daemon.port)/list", "https://[::1]:\(daemon.port)/list"] {
                let result = fetcher.fetch(FetchRequest(url: url, accept: "*/*"))
                #expect(result.error == .refusedAddress, "\(url): \(String(describing: result))")
            }
            #expect(probe.requests == 0)
        }
    }

    @Test func theTestExemptionIs127001Only() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let daemon = try serve(tls: pki.serverTLS()) { _ in .text(200, "never") }
        defer { daemon.stop() }
        // The daemon listens on 127.0.0.1 only, so a connection to 127.0.0.2 would fail
        // as a connect error: refusedAddress says the rule stopped it first.
        let result = StatusFetcher(policy: strictLoopbackPolicy(caFile: pki.caFile)).fetch(FetchRequest(url: "https://127.0.0.2:\(daemon.port)/list", accept: "*/*"))
        #expect(result.error == .refusedAddress, "\(String(describing: result))")
        let insecure = StatusFetcher(policy: insecurePolicy()).fetch(FetchRequest(url: "http://127.0.0.2:\(daemon.port)/list", accept: "*/*"))
        #expect(insecure.error?.code == "fetch.connect", "\(String(describing: insecure))")
    }

    @Test func aRedirectToARefusedAddressIsRefused() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let daemon = try serve(tls: pki.serverTLS()) { request in
            request.path == "/start" ? HTTPResponse(status: 302, headers: [("Location", "https://127.0.0.2:1/list")]) : .text(404, "no")
        }
        defer { daemon.stop() }
        let result = StatusFetcher(policy: strictLoopbackPolicy(caFile: pki.caFile)).fetch(FetchRequest(url: "https://127.0.0.1:\(daemon.port)/start", accept: "*/*"))
        #expect(result.error == .refusedAddress, "\(String(describing: result))")
    }

    @Test func aRedirectToHTTPIsRefusedWithoutContactingItsTarget() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let plainProbe = Probe()
        let plain = try serve(probe: plainProbe) { _ in .text(200, "never") }
        defer { plain.stop() }
        let tlsProbe = Probe()
        let secure = try serve(tls: pki.serverTLS(), probe: tlsProbe) { _ in
            HTTPResponse(status: 302, headers: [("Location", "http://127.0.0.1:\(plain.port)/list")])
        }
        defer { secure.stop() }
        let result = StatusFetcher(policy: strictLoopbackPolicy(caFile: pki.caFile)).fetch(FetchRequest(url: "https://127.0.0.1:\(secure.port)/start", accept: "*/*"))
        #expect(result.error == .redirectInsecure("http"))
        #expect(result.error?.code == "fetch.redirect_insecure")
        #expect(tlsProbe.requests == 1)
        #expect(plainProbe.requests == 0)

        // With allowInsecure the same redirect is followed.
        var insecure = insecurePolicy()
        insecure.caFile = pki.caFile
        let followed = StatusFetcher(policy: insecure).fetch(FetchRequest(url: "https://127.0.0.1:\(secure.port)/start", accept: "*/*"))
        #expect(followed.body == Array("never".utf8))
        #expect(plainProbe.requests == 1)
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/list", "gopher://127.0.0.1:70/1", "dict://127.0.0.1:2628/d:x",
                      "ldap://127.0.0.1/o=x", "FILE:///etc/hosts", "data:text/plain,hello", "javascript:alert(1)"])
    func otherSchemesAreRefused(_ url: String) {
        for policy in [FetchPolicy(), insecurePolicy()] {
            let result = StatusFetcher(policy: policy).fetch(FetchRequest(url: url, accept: "*/*"))
            #expect(result.error?.code == "fetch.refused_scheme" || result.error?.code == "fetch.malformed_url", "\(url): \(String(describing: result))")
        }
    }

    @Test func schemesAreNamedInTheError() {
        #expect(StatusFetcher(policy: FetchPolicy()).fetch(FetchRequest(url: "gopher://127.0.0.1:70/1", accept: "*/*")).error == .refusedScheme("gopher"))
        #expect(StatusFetcher(policy: FetchPolicy()).fetch(FetchRequest(url: "FTP://127.0.0.1/x", accept: "*/*")).error == .refusedScheme("ftp"))
    }

    @Test func credentialsInTheURLAreRefusedWithoutContactingTheServer() throws {
        let probe = Probe()
        let daemon = try serve(probe: probe) { _ in .text(200, "never") }
        defer { daemon.stop() }
        let fetcher = StatusFetcher(policy: insecurePolicy())
        for url in ["http://user:secret@127.0.0.1:\(daemon.port)/list", "http://user@127.0.0.1:\(daemon.port)/list",
                    "http://:secret@127.0.0.1:\(daemon.port)/list"] {
            let result = fetcher.fetch(FetchRequest(url: url, accept: "*/*"))
            #expect(result.error == .refusedCredentials, "\(url): \(String(describing: result))")
            #expect(!(result.error?.description.contains("secret") ?? true))
        }
        #expect(probe.requests == 0)
    }

    @Test(arguments: ["", "not a url", "https://", "//127.0.0.1/list", "127.0.0.1/list", "https://exa mple.com/",
                      "https://example.com/\u{0}x", "https://[::1/list", "https://example.com:99999/"])
    func malformedURLsAreRefused(_ url: String) {
        let result = StatusFetcher(policy: FetchPolicy()).fetch(FetchRequest(url: url, accept: "*/*"))
        #expect(result.error == .malformedURL, "\(String(describing: result))")
    }

    @Test func anOverlongURLIsRefused() {
        let url = "https://status.example/" + String(repeating: "a", count: 9000)
        #expect(StatusFetcher(policy: FetchPolicy()).fetch(FetchRequest(url: url, accept: "*/*")).error == .malformedURL)
    }

    @Test func headerValuesCannotAddHeaders() throws {
        let probe = Probe()
        let daemon = try serve(probe: probe) { _ in .text(200, "never") }
        defer { daemon.stop() }
        let fetcher = StatusFetcher(policy: insecurePolicy())
        let url = "http://127.0.0.1:\(daemon.port)/list"
        for request in [FetchRequest(url: url, accept: "*/*", ifNoneMatch: "\"v1\"\r\nX-Injected: 1"),
                        FetchRequest(url: url, accept: "*/*\nX-Injected: 1"),
                        FetchRequest(url: url, accept: "*/*", ifModifiedSince: "Tue\r, 01 Jul 2025")] {
            #expect(fetcher.fetch(request).error == .malformedHeader)
        }
        #expect(probe.requests == 0)
    }

    /// Whatever goes wrong, the error's words hold no part of the URL but its scheme.
    @Test func errorsNeverQuoteTheURL() throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let daemon = try serve { request in
            request.path.hasPrefix("/loop") ? HTTPResponse(status: 302, headers: [("Location", "/loop/person-4711?id=4711")])
                : HTTPResponse(status: 404, body: Array("no person-4711 here".utf8))
        }
        defer { daemon.stop() }
        let tlsDaemon = try serve(tls: pki.serverTLS()) { _ in .text(200, "x") }
        defer { tlsDaemon.stop() }
        let port = daemon.port
        let cases: [(FetchPolicy, String)] = [
            (FetchPolicy(), "http://127.0.0.1:\(port)/person-4711?id=4711"),
            (FetchPolicy(), "https://127.0.0.1:\(port)/person-4711?id=4711"),
            (FetchPolicy(), "https://person-4711:x@status.example/person-4711"),
            (FetchPolicy(), "https://status.example/person 4711"),
            (insecurePolicy(), "http://127.0.0.1:\(port)/person-4711?id=4711"),
            (insecurePolicy(), "http://127.0.0.1:\(port)/loop/person-4711?id=4711"),
            (insecurePolicy(), "http://127.0.0.2:\(port)/person-4711?id=4711"),
            (insecurePolicy(), "https://127.0.0.1:\(tlsDaemon.port)/person-4711?id=4711"),
            (insecurePolicy(), "http://person-4711.invalid/person-4711?id=4711"),
        ]
        var codes: Set<String> = []
        for (policy, url) in cases {
            let error = try #require(StatusFetcher(policy: policy).fetch(FetchRequest(url: url, accept: "*/*")).error, "\(url)")
            codes.insert(error.code)
            for text in [error.description, error.detail, "\(error)"] {
                #expect(!text.contains("4711") && !text.contains("127.0.0") && !text.contains("status.example"), "\(text)")
            }
        }
        // The cases reach the failures they are meant to.
        #expect(codes == ["fetch.refused_scheme", "fetch.refused_address", "fetch.refused_credentials", "fetch.malformed_url",
                          "fetch.http_status", "fetch.redirects", "fetch.connect", "fetch.tls"])
    }
}
