import Foundation
import Storage

/// The report's time axis: every hour of the window as a bin (an hour
/// without results is a bin of zeros, drawn as a gap), and where its tick
/// labels go. The views only have rows for hours with results, so without
/// this the chart would close the gaps and lie about time.
public struct ReportTimeline: Sendable {
    public struct Bin: Sendable, Equatable {
        public let start: Date
        public let verified: Int
        public let rejected: Int
    }
    public struct Tick: Sendable, Equatable {
        /// The bin whose start the tick marks.
        public let bin: Int
        public let label: String
        /// The day, under the first tick and under each midnight when ticks are hours apart.
        public let dayLabel: String?
    }

    /// Above this many hours (45 days) a bin is a day, so a long window stays a readable, small page.
    static let maximumHourlyBins = 1080
    /// Tick spacings offered, in hours; the smallest whose labels fit is used
    /// (those from 168 on are whole weeks, so weekly bins find one).
    static let tickSteps = [1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 672, 1344, 2184, 4368, 8736]

    /// How much time a bin holds: `veridoc report --per`.
    public enum Binning: String, Sendable, CaseIterable {
        case hour, day, week

        public var hours: Int {
            switch self {
            case .hour: 1
            case .day: 24
            case .week: 168
            }
        }
    }

    public let binHours: Int
    /// What a bin is called in the page: hour, day or week.
    public var binName: String { Binning.allCases.first { $0.hours == binHours }?.rawValue ?? "\(binHours) hours" }
    public let bins: [Bin]
    public let ticks: [Tick]

    /// `since` to the hour of `until` (inclusive), widened to any hour with data
    /// outside it (results verified with a clock ahead of the report's).
    /// `maximumTicks` is how many labels fit across the chart. `binning`
    /// nil: hours, or days past 45 days; weeks start on Mondays (UTC).
    public init(hours: [AnalyticsSnapshot.Hour], since: Date, until: Date, maximumTicks: Int, binning: Binning? = nil) {
        let hour = 3600.0
        let first = min(hours.map(\.hour).min() ?? since, since)
        let last = max(hours.map(\.hour).max() ?? until, until)
        let firstHour = Int((first.timeIntervalSince1970 / hour).rounded(.down))
        let lastHour = max(firstHour, Int((last.timeIntervalSince1970 / hour).rounded(.down)))
        binHours = binning?.hours ?? (lastHour - firstHour + 1 > Self.maximumHourlyBins ? 24 : 1)
        // 1970-01-01 was a Thursday; Monday is 4 days (96 h) later.
        let start = firstHour - Self.modulo(firstHour - (binHours == 168 ? 96 : 0), binHours)
        let count = (lastHour - start) / binHours + 1

        var verified = [Int](repeating: 0, count: count), rejected = verified
        for row in hours {
            let index = (Int((row.hour.timeIntervalSince1970 / hour).rounded(.down)) - start) / binHours
            verified[index] += row.verified
            rejected[index] += row.rejected
        }
        let binHours = binHours
        bins = (0..<count).map { index in
            Bin(start: Date(timeIntervalSince1970: Double(start + index * binHours) * hour), verified: verified[index], rejected: rejected[index])
        }

        // Ticks fall on round UTC times (multiples of the step since the epoch;
        // weekly and longer steps on Mondays), so labels read 00:00, 06:00, 12:00.
        let span = count * binHours
        let step = Self.tickSteps.first { $0 % binHours == 0 && span / $0 + 1 <= max(2, maximumTicks) } ?? Self.tickSteps.last!
        let mondayOffset = step >= 168 ? 96 : 0
        var ticks: [Tick] = []
        for index in 0..<count {
            let epochHour = start + index * binHours
            guard Self.modulo(epochHour - mondayOffset, step) == 0 else { continue }
            let date = Date(timeIntervalSince1970: Double(epochHour) * hour)
            let midnight = Self.modulo(epochHour, 24) == 0
            if step < 24 {
                ticks.append(Tick(bin: index, label: Self.format(date, "HH:mm"), dayLabel: ticks.isEmpty || midnight ? Self.format(date, "MMM d") : nil))
            } else {
                ticks.append(Tick(bin: index, label: Self.format(date, "MMM d"), dayLabel: ticks.isEmpty ? Self.format(date, "yyyy") : nil))
            }
        }
        self.ticks = ticks
    }

    static func modulo(_ value: Int, _ divisor: Int) -> Int { ((value % divisor) + divisor) % divisor }

    static func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}
