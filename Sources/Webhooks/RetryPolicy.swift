import Foundation
import HTTPClient
import Storage

/// What one delivery attempt's answer means (Standard Webhooks): 2xx
/// delivered; 410 the receiver is gone (the endpoint is disabled); anything
/// else, a redirect included (never followed), and a failure to connect or
/// answer in time, is tried again after the schedule's next delay, jittered
/// up to a tenth later, or after `Retry-After` when that is longer; after
/// the schedule's last delay the delivery is dead.
public struct RetryPolicy: Sendable {
    /// Seconds before each retry.
    public let schedule: [Int]
    /// The longest wait a `Retry-After` may ask for.
    public let maxDelaySeconds: Int

    public init(schedule: [Int], maxDelaySeconds: Int) {
        self.schedule = schedule
        self.maxDelaySeconds = maxDelaySeconds
    }

    /// `attempts`: made before this one. `jitter` in 0...1 (random in use).
    public func outcome(_ answer: Result<HTTPClient.Response, HTTPClient.Failure>, attempts: Int, now: Date,
                        jitter: Double = Double.random(in: 0...1)) -> WebhookDeliveriesTable.Outcome {
        let status: Int?
        let error: String
        var retryAfter: Int?
        switch answer {
        case .success(let response):
            if (200..<300).contains(response.status) { return .delivered(status: response.status) }
            if response.status == 410 { return .endpointGone }
            status = response.status
            error = (300..<400).contains(response.status) ? "redirect" : "http_status"
            retryAfter = response.headers["retry-after"].flatMap { Self.seconds(retryAfter: $0, now: now) }
        case .failure(let failure):
            status = nil
            error = failure.code
        }
        guard attempts < schedule.count else { return .dead(status: status, error: error) }
        let scheduled = Double(schedule[attempts]) + Double(schedule[attempts]) * 0.1 * min(max(jitter, 0), 1)
        let delay = min(max(scheduled, Double(retryAfter ?? 0)), Double(maxDelaySeconds))
        return .retry(afterSeconds: delay, status: status, error: error)
    }

    /// A `Retry-After` value in seconds: delay-seconds, or an HTTP date
    /// (RFC 9110: IMF-fixdate, or the obsolete RFC 850 and asctime forms)
    /// from now; nil when it reads as neither.
    static func seconds(retryAfter value: String, now: Date) -> Int? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return Int(text.prefix(9)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return max(0, Int(date.timeIntervalSince(now).rounded(.up))) }
        }
        return nil
    }
}
