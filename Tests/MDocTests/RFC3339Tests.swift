import Foundation
import MDoc
import Testing

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00Z"),
        (1.5, "1970-01-01T00:00:01.500Z"),
        (0.9996, "1970-01-01T00:00:01Z"),  // milliseconds round up into the next second
        (86_399.9996, "1970-01-02T00:00:00Z"),  // ... and into the next day
        (951_782_400.007, "2000-02-29T00:00:00.007Z"),
        (-1.0, "1969-12-31T23:59:59Z"),
        (253_402_300_799.0, "9999-12-31T23:59:59Z"),
    ])
    func knownInstants(_ seconds: TimeInterval, _ text: String) {
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: seconds)) == text)
    }

    /// Whole seconds agree with Foundation's formatter, from 1583 (before the
    /// Gregorian reform Foundation counts Julian days; RFC 3339 stays proleptic Gregorian).
    @Test func agreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int64.random(in: -12_212_553_600...253_402_300_799, using: &generator)))
            #expect(RFC3339.string(from: date) == formatter.string(from: date))
        }
    }

    /// What is written parses back to the same instant, to the millisecond.
    @Test func roundTripsMilliseconds() throws {
        for milliseconds in stride(from: Int64(1_700_000_000_000), to: 1_700_000_003_000, by: 7) {
            let date = Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
            let parsed = try #require(RFC3339.date(from: RFC3339.string(from: date)))
            #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.0005)
        }
    }
}
