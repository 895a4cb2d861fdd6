import Foundation
import Postgres

/// The time partitions of `element_values`, which is partitioned by range on
/// `retain_until` so that expiry is mostly dropping whole tables, not
/// deleting rows. Partitions are named `element_values_dYYYYMMDD_YYYYMMDD`
/// (their UTC day bounds, upper exclusive); `element_values_unlimited` holds
/// `'infinity'` (mayStore without a limit) and is created by the migration.
///
/// Widths: one day for retain_until within `dailyHorizon` of now, one
/// calendar month beyond (so ten-year retentions do not create thousands of
/// tables), clipped to the gap between existing partitions.
///
/// Unchecked Sendable: `known` is guarded by `lock`.
public final class ValuePartitions: @unchecked Sendable {
    public static let table = "element_values"
    static let prefix = "element_values_d"
    static let dailyHorizon: TimeInterval = 62 * 86_400
    /// Serializes partition creation across workers (and the purge loop).
    static let lockKey: Int64 = 0x7665_7269_646f_7032  // "veridop2"

    public struct Partition: Sendable, Equatable {
        public let name: String
        public let lower: Date
        public let upper: Date
        public func covers(_ instant: Date) -> Bool { lower <= instant && instant < upper }
    }

    private let lock = NSLock()
    private var known: [Partition] = []

    public init() {}

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static func name(lower: Date, upper: Date) -> String {
        prefix + dayString(lower) + "_" + dayString(upper)
    }

    static func dayString(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d%02d%02d", parts.year!, parts.month!, parts.day!)
    }

    static func parseDay(_ text: Substring) -> Date? {
        guard text.count == 8, let number = Int(text) else { return nil }
        return calendar.date(from: DateComponents(year: number / 10_000, month: number / 100 % 100, day: number % 100))
    }

    static func parse(_ name: String) -> Partition? {
        guard name.hasPrefix(prefix) else { return nil }
        let parts = name.dropFirst(prefix.count).split(separator: "_")
        guard parts.count == 2, let lower = parseDay(parts[0]), let upper = parseDay(parts[1]) else { return nil }
        return Partition(name: name, lower: lower, upper: upper)
    }

    /// The range a new partition for `instant` gets (see the type's comment).
    static func range(for instant: Date, now: Date, existing: [Partition]) -> (lower: Date, upper: Date) {
        let day = calendar.startOfDay(for: instant)
        var lower: Date
        var upper: Date
        if instant < now.addingTimeInterval(dailyHorizon) {
            lower = day
            upper = calendar.date(byAdding: .day, value: 1, to: day)!
        } else {
            lower = calendar.date(from: calendar.dateComponents([.year, .month], from: instant))!
            upper = calendar.date(byAdding: .month, value: 1, to: lower)!
        }
        for partition in existing {
            if partition.upper <= instant { lower = max(lower, partition.upper) }
            if partition.lower > instant { upper = min(upper, partition.lower) }
        }
        return (lower, upper)
    }

    /// The dated partitions, in order (a detach left pending by an interrupted purge included).
    public static func list(on connection: PostgresConnection) throws -> [(partition: Partition, detachPending: Bool)] {
        let rows = try connection.execute("""
            SELECT c.relname, i.inhdetachpending FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'element_values'::regclass
            """)
        var partitions: [(Partition, Bool)] = []
        for row in 0..<rows.rowCount {
            if let name = rows.string(row, "relname"), let partition = parse(name) {
                partitions.append((partition, rows.bool(row, "inhdetachpending") ?? false))
            }
        }
        return partitions.sorted { $0.0.lower < $1.0.lower }
    }

    /// Makes sure a partition covers every instant (the unlimited partition
    /// covers 'infinity'). Run outside the batch transaction: creating is a
    /// short transaction of its own, and only when a new day (or month) first appears.
    public func ensure(covering instants: [Date], now: Date, on connection: PostgresConnection) throws {
        lock.lock()
        let cached = known
        lock.unlock()
        let missing = instants.filter { instant in !cached.contains { $0.covers(instant) } }
        guard !missing.isEmpty else { return }
        let current = try connection.transaction { connection -> [Partition] in
            _ = try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int(Self.lockKey)])
            var existing = try Self.list(on: connection).filter { !$0.detachPending }.map(\.partition)
            for instant in missing.sorted() where !existing.contains(where: { $0.covers(instant) }) {
                let (lower, upper) = Self.range(for: instant, now: now, existing: existing)
                let name = Self.name(lower: lower, upper: upper)
                // A separate table attached afterwards: ATTACH takes only SHARE UPDATE
                // EXCLUSIVE on the parent, so concurrent batch inserts are not blocked.
                try connection.executeScript("""
                    CREATE TABLE \(name) (LIKE element_values INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
                    ALTER TABLE element_values ATTACH PARTITION \(name)
                        FOR VALUES FROM ('\(Self.sqlDay(lower))') TO ('\(Self.sqlDay(upper))')
                    """)
                existing.append(Partition(name: name, lower: lower, upper: upper))
                existing.sort { $0.lower < $1.lower }
            }
            return existing
        }
        lock.lock()
        known = current
        lock.unlock()
    }

    /// Detaches a partition (finishing a detach an interrupted purge left
    /// pending, or CONCURRENTLY, so batch inserts go on meanwhile), drops it,
    /// and returns the rows it held.
    public static func drop(_ partition: Partition, detachPending: Bool, on connection: PostgresConnection) throws -> Int {
        let rows = try connection.execute("SELECT count(*) AS count FROM \(partition.name)").int(0, "count") ?? 0
        try connection.execute("ALTER TABLE element_values DETACH PARTITION \(partition.name) \(detachPending ? "FINALIZE" : "CONCURRENTLY")")
        try connection.execute("DROP TABLE \(partition.name)")
        return Int(rows)
    }

    /// Forgets the cache (after the purge dropped partitions).
    public func invalidate() {
        lock.lock()
        known = []
        lock.unlock()
    }

    static func sqlDay(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d 00:00:00+00", parts.year!, parts.month!, parts.day!)
    }
}
