import Testing
@testable import HTTPService

/// The strict reading of a request target, on its own: what is refused, and
/// that ordinary paths with dots or percent signs are not.
@Suite struct HTTPFramingTests {
    @Test func targetsWithNULOrDotSegmentsAreRefused() {
        for target in ["/a%00", "/a?b=%00", "/.", "/..", "/a/./b", "/a/../b", "/a/%2e/b", "/a/%2E%2e/b", "/a/.%2e", "/%2e%2E?x=1", "/a/.."] {
            #expect(HTTPDaemon.targetProblem(target) != nil, "\(target)")
        }
    }

    @Test func ordinaryTargetsPass() {
        for target in ["/", "/healthz", "/healthz?verbose=1", "/v1/sessions/3f2c9a4e-0000-4000-8000-000000000000", "/a/.../b", "/.well-known/x",
                       "/a.b/c", "/a/%2e%2e%2e", "/a/%2f", "/a%20b", "/a?x=../y", "/a/%200", "/a/%0"] {
            #expect(HTTPDaemon.targetProblem(target) == nil, "\(target)")
        }
    }

    @Test func framingHeadersAreReadStrictly() {
        func problem(_ headers: [(String, String)]) -> String? {
            var values: [String: String] = [:]
            var counts: [String: Int] = [:]
            for (name, value) in headers {
                values[name] = value
                counts[name, default: 0] += 1
            }
            return HTTPDaemon.framingProblem(target: "/", headers: values, counts: counts)
        }
        #expect(problem([("content-length", "2")]) == nil)
        #expect(problem([("transfer-encoding", "chunked")]) == nil)
        #expect(problem([("transfer-encoding", " Chunked ")]) == nil)
        #expect(problem([("authorization", "Bearer a"), ("cookie", "a"), ("cookie", "b")]) == nil, "only the framing headers and Authorization are held to one")
        #expect(problem([("content-length", "2"), ("content-length", "2")]) != nil)
        #expect(problem([("content-length", "2"), ("transfer-encoding", "chunked")]) != nil)
        #expect(problem([("transfer-encoding", "chunked"), ("transfer-encoding", "chunked")]) != nil)
        #expect(problem([("transfer-encoding", "gzip, chunked")]) != nil)
        #expect(problem([("content-length", "+2")]) != nil)
        #expect(problem([("content-length", "")]) != nil)
        #expect(problem([("authorization", "Bearer a"), ("authorization", "Bearer b")]) != nil)
    }
}
