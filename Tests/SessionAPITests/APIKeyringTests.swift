import Foundation
import JSON
import Storage
import Testing
import TestSupport
import Verification
@testable import SessionAPI

@Suite struct APIKeyringTests {
    // SHA-256("password"), a published value: the hash is the standard one, not ours.
    static let passwordHash = "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"

    @Test func theSettingIsTheKeysSHA256() {
        #expect(APIKeyring.setting(forKey: "password") == Self.passwordHash)
    }

    @Test func aKeyFindsItsTenantAndNoOther() {
        let keyring = APIKeyring(hashes: ["acme": [APIKeyring.setting(forKey: "a1"), APIKeyring.setting(forKey: "a2")],
                                          "globex": [APIKeyring.setting(forKey: "g1")]])
        #expect(keyring.caller(authorization: "Bearer a2") == .init(tenant: "acme", keyIndex: 1))
        #expect(keyring.caller(authorization: "bearer g1") == .init(tenant: "globex", keyIndex: 0), "the scheme is case-insensitive (RFC 9110)")
        #expect(keyring.caller(authorization: "Bearer a3") == nil)
        #expect(keyring.caller(authorization: "Bearer ") == nil)
        #expect(keyring.caller(authorization: "Basic a1") == nil)
        #expect(keyring.caller(authorization: "a1") == nil)
        #expect(keyring.caller(authorization: nil) == nil)
        #expect(keyring.caller(authorization: "Bearer " + String(repeating: "x", count: 10_000)) == nil)
    }

    @Test func onlyTheExactLowercaseLineMatches() {
        let upper = "sha256:" + APIKeyring.setting(forKey: "password").dropFirst(7).uppercased()
        #expect(APIKeyring(hashes: ["acme": [upper, "password"]]).caller(authorization: "Bearer password") == nil)
        #expect(APIKeyring(hashes: ["acme": []]).isEmpty)
    }
}

@Suite struct RateLimiterTests {
    @Test func aBurstThenTheRate() {
        let limiter = RateLimiter(requestsPerSecond: 2, burst: 3)
        for _ in 0..<3 { #expect(limiter.admit("k", now: 100) == nil) }
        #expect(limiter.admit("k", now: 100) == 1, "an empty bucket says how long to wait")
        #expect(limiter.admit("other", now: 100) == nil, "keys have buckets of their own")
        #expect(limiter.admit("k", now: 100.5) == nil, "half a second at 2/s is one more request")
        #expect(limiter.admit("k", now: 100.5) != nil)
        for _ in 0..<3 { #expect(limiter.admit("k", now: 1_000) == nil) }
        #expect(limiter.admit("k", now: 1_000) != nil, "refilling stops at the burst")
    }

    @Test func slowRatesWaitLonger() {
        let limiter = RateLimiter(requestsPerSecond: 1, burst: 1)
        #expect(limiter.admit("k", now: 0) == nil)
        #expect(limiter.admit("k", now: 0) == 1)
        let tenth = RateLimiter(requestsPerSecond: 1, burst: 1, capacity: 1)
        #expect(tenth.admit("a", now: 0) == nil)
        #expect(tenth.admit("b", now: 0) == nil, "a full table forgets its oldest bucket rather than refusing a new key")
    }
}

@Suite struct RequestBodyTests {
    @Test func fieldsAreReadStrictly() throws {
        var body = try RequestBody(Array(#"{"name":"x","count":3,"items":[{"a":"1"}]}"#.utf8))
        #expect(try body.requiredString("name") == "x")
        #expect(try body.integer("count", range: 1...5) == 3)
        let items = try body.objects("items", maxCount: 4) { (item: inout RequestBody) throws(APIError) in try item.requiredString("a") }
        #expect(items == ["1"])
        try body.finish()
    }

    @Test func eachRefusalNamesTheField() throws {
        #expect(throws: APIError.malformedJSON) { try RequestBody(Array("[1]".utf8)) }
        #expect(throws: APIError.malformedJSON) { try RequestBody(Array(#"{"a":1,"a":2}"#.utf8)) }
        var unknown = try RequestBody(Array(#"{"name":"x","nmae":"y"}"#.utf8))
        _ = try unknown.requiredString("name")
        #expect(throws: APIError.unknownField("nmae")) { try unknown.finish() }
        var missing = try RequestBody(Array("{}".utf8))
        #expect(throws: APIError.missingField("name")) { try missing.requiredString("name") }
        var wrongType = try RequestBody(Array(#"{"count":"3"}"#.utf8))
        #expect(throws: APIError.invalidField("count", expected: "a whole number from 1 to 5")) { try wrongType.integer("count", range: 1...5) }
        var nested = try RequestBody(Array(#"{"items":[{"a":"1"},{"a":"2","b":0}]}"#.utf8))
        #expect(throws: APIError.unknownField("items[1].b")) {
            try nested.objects("items", maxCount: 4) { (item: inout RequestBody) throws(APIError) in try item.requiredString("a") }
        }
        // "flöw" spelt with a combining diaeresis is not the "flöw" that was read: a field of its own, and unknown.
        var lookalike = try RequestBody(Array("{\"fl\u{00F6}w\":\"x\",\"flo\u{0308}w\":\"y\"}".utf8))
        _ = try lookalike.requiredString("fl\u{00F6}w")
        do {
            try lookalike.finish()
            Issue.record("the decomposed spelling passed as the field that was read")
        } catch {
            guard case .unknownField(let field) = error else { Issue.record("\(error)"); return }
            #expect(Array(field.utf8) == Array("flo\u{0308}w".utf8), "String == would call the two equal; their bytes differ")
        }
    }
}

@Suite struct APIErrorTests {
    /// Every case's code is one `allCodes` lists (which the contract's enum is held to), and no two cases share one by accident.
    @Test func everyCodeIsListed() {
        let cases: [APIError] = [.unauthorized, .notFound, .methodNotAllowed(allow: "GET"), .malformedJSON, .unknownField("f"), .missingField("f"),
                                 .invalidField("f", expected: "x"), .notConfigured("x"), .certificateExpired("webReader"), .tooManyRequests(retryAfterSeconds: 1),
                                 .unsupportedMediaType, .sessionExpired, .responseConflict, .idempotencyConflict, .unavailable("database"), .internalError]
        #expect(Set(cases.map(\.code)).count == cases.count)
        #expect(Set(cases.map(\.code)).union(["body_too_large", "malformed_request"]) == Set(APIError.allCodes), "the two the daemon answers itself")
        for error in cases { #expect((400...599).contains(error.status)) }
    }

    /// Each session failure has its own answer, and where the session's
    /// domain and the request's reading name the same thing they agree.
    @Test func everySessionFailureMapsToItsOwnAnswer() {
        let failures: [SessionError] = [.notFound, .expired, .responseConflict, .eventTooLarge(limit: 1), .notConfigured("readerTokens"),
                                        .unavailable(.database), .unavailable(.broker), .internalFailure]
        let answers = failures.map(APIError.init)
        #expect(Set(answers.map { "\($0.code) \($0.detail)" }).count == failures.count)
        #expect(answers.map(\.status) == [404, 409, 409, 413, 409, 503, 503, 500])
    }
}

@Suite struct SessionStateTests {
    /// The states the contract lists are the type's, and every verdict the
    /// worker gives settles a session.
    @Test func theContractAndTheWorkerAgreeWithTheType() throws {
        let document = try #require(try JSONParser().parse(Array(OpenAPIDocument.bytes)))
        let listed = document["components"]?["schemas"]?["SessionState"]?["properties"]?["status"]?["enum"]?.arrayValue?.compactMap(\.stringValue)
        #expect(Set(listed ?? []) == Set(SessionState.allCases.map(\.rawValue)))
        for verdict in VerificationResult.verdicts { #expect(SessionState(verdict: verdict)?.isSettled == true, "\(verdict)") }
    }
}
