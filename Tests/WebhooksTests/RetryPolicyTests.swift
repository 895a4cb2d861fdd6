import Foundation
import HTTPClient
import Storage
import Testing
import Webhooks

/// What each answer to a delivery means, with the schedule's delays.
@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(schedule: [5, 300, 1_800], maxDelaySeconds: 86_400)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func response(_ status: Int, _ headers: [String: String] = [:]) -> Result<HTTPClient.Response, HTTPClient.Failure> {
        .success(HTTPClient.Response(status: status, headers: headers, body: [], truncated: false))
    }

    @Test func answersAreSortedAsTheSpecificationSays() {
        #expect(policy.outcome(response(200), attempts: 0, now: now, jitter: 0) == .delivered(status: 200))
        #expect(policy.outcome(response(204), attempts: 3, now: now, jitter: 0) == .delivered(status: 204))
        #expect(policy.outcome(response(410), attempts: 0, now: now, jitter: 0) == .endpointGone)
        #expect(policy.outcome(response(500), attempts: 0, now: now, jitter: 0) == .retry(afterSeconds: 5, status: 500, error: "http_status"))
        #expect(policy.outcome(response(301), attempts: 1, now: now, jitter: 0) == .retry(afterSeconds: 300, status: 301, error: "redirect"))
        #expect(policy.outcome(.failure(.timeout), attempts: 2, now: now, jitter: 0) == .retry(afterSeconds: 1_800, status: nil, error: "timeout"))
        #expect(policy.outcome(.failure(.addressRefused), attempts: 3, now: now, jitter: 0) == .dead(status: nil, error: "address_refused"))
        #expect(policy.outcome(response(404), attempts: 3, now: now, jitter: 0) == .dead(status: 404, error: "http_status"))
    }

    @Test func jitterAndRetryAfterOnlyLengthenTheWait() {
        #expect(policy.outcome(response(503), attempts: 1, now: now, jitter: 1) == .retry(afterSeconds: 330, status: 503, error: "http_status"))
        #expect(policy.outcome(response(429, ["retry-after": "120"]), attempts: 0, now: now, jitter: 0) == .retry(afterSeconds: 120, status: 429, error: "http_status"))
        // Shorter than the schedule's delay: the schedule wins.
        #expect(policy.outcome(response(429, ["retry-after": "1"]), attempts: 1, now: now, jitter: 0) == .retry(afterSeconds: 300, status: 429, error: "http_status"))
        let date = "Fri, 15 Jan 2027 08:16:40 GMT"  // now + 1,000 s
        #expect(policy.outcome(response(503, ["retry-after": date]), attempts: 0, now: now, jitter: 0) == .retry(afterSeconds: 1_000, status: 503, error: "http_status"))
        for obsolete in ["Friday, 15-Jan-27 08:16:40 GMT", "Fri Jan 15 08:16:40 2027"] {
            #expect(policy.outcome(response(503, ["retry-after": obsolete]), attempts: 0, now: now, jitter: 0) == .retry(afterSeconds: 1_000, status: 503, error: "http_status"), "\(obsolete)")
        }
        // A wait past the bound is cut to it; nonsense is ignored.
        #expect(policy.outcome(response(429, ["retry-after": "99999999"]), attempts: 0, now: now, jitter: 0) == .retry(afterSeconds: 86_400, status: 429, error: "http_status"))
        #expect(policy.outcome(response(429, ["retry-after": "soon"]), attempts: 0, now: now, jitter: 0) == .retry(afterSeconds: 5, status: 429, error: "http_status"))
    }

    @Test func targetsAreHTTPSToPublicHostsUnlessAllowed() {
        #expect(WebhookEndpoint.problem(url: "https://hooks.example.com/veridoc", allowInsecure: false) == nil)
        #expect(WebhookEndpoint.problem(url: "https://203.0.114.7:8443/x", allowInsecure: false) == nil)
        for url in ["http://hooks.example.com/", "https://127.0.0.1/x", "https://10.1.2.3/", "https://[::1]/", "https://169.254.169.254/latest",
                    "https://user:pw@hooks.example.com/", "https://localhost/x", "https://api.localhost./x", "https://hooks.example.com/#frag", "hooks.example.com/x", "ftp://hooks.example.com/"] {
            #expect(WebhookEndpoint.problem(url: url, allowInsecure: false) != nil, "\(url)")
        }
        #expect(WebhookEndpoint.problem(url: "http://127.0.0.1:8080/hooks", allowInsecure: true) == nil)
    }
}
