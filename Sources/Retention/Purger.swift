import Foundation
import Postgres
import Storage

/// What one purge pass did. Counts and ages only: nothing about the values.
public struct PurgeReport: Sendable, Equatable {
    /// Value rows removed (dropped partitions' rows plus deleted rows).
    public var purged = 0
    public var droppedPartitions = 0
    /// Age of the oldest value past its retain_until when the pass began
    /// (0 when none): the promise is that this stays below one purge interval.
    public var oldestOverdueSeconds: Double = 0
    /// The same after the pass (0 unless the pass was cut short).
    public var oldestOverdueAfterSeconds: Double = 0
    /// Outbox rows left from versions that kept published outcomes (with
    /// their sealed claims), now removed.
    public var publishedOutcomesRemoved = 0
    /// Sessions removed (they expired more than `sessionKeep` ago).
    public var sessionsRemoved = 0
    /// Revocation references removed with their results' values.
    public var statusReferencesRemoved = 0

    public init() {}
}

/// One purge pass over expired values. It never runs inside a write-path
/// transaction and takes no lock that blocks batch inserts:
///
/// 1. partitions wholly past `now` are detached CONCURRENTLY and dropped;
/// 2. rows past retain_until in the partitions straddling `now` are deleted
///    in batches of `batchSize`, each its own short statement;
/// 3. partitions for the next days are created ahead, so the write path
///    rarely has to;
/// 4. outbox rows already published are removed, with their sealed claims
///    (they were only there to be delivered). Workers delete rows as they
///    are delivered; this removes what earlier versions marked and kept;
/// 5. sessions that expired more than `sessionKeep` ago are removed, with
///    the outcome each kept for the session API.
public struct Purger: Sendable {
    public let batchSize: Int
    public let partitions: ValuePartitions
    public let sessionKeep: TimeInterval

    public init(batchSize: Int, partitions: ValuePartitions = ValuePartitions(), sessionKeep: TimeInterval = 3_600) {
        self.sessionKeep = sessionKeep
        self.batchSize = batchSize
        self.partitions = partitions
    }

    public func pass(now: Date = Date(), on connection: PostgresConnection) throws -> PurgeReport {
        var report = PurgeReport()
        report.oldestOverdueSeconds = try Self.oldestOverdue(now: now, on: connection)

        for (partition, pending) in try ValuePartitions.list(on: connection) where partition.upper <= now {
            report.purged += try ValuePartitions.drop(partition, detachPending: pending, on: connection)
            report.droppedPartitions += 1
        }
        if report.droppedPartitions > 0 { partitions.invalidate() }

        report.purged += try connection.repeatUntilDone(batchSize: batchSize) { ElementValuesTable.deleteExpired(at: now, limit: $0) }
        report.statusReferencesRemoved = try connection.repeatUntilDone(batchSize: batchSize) { StatusReferencesTable.deleteExpired(at: now, limit: $0) }
        _ = try connection.repeatUntilDone(batchSize: batchSize) { StatusListsTable.deleteExpired(at: now, limit: $0) }

        let day: TimeInterval = 86_400
        try partitions.ensure(covering: [now, now + day, now + 2 * day], now: now, on: connection)

        report.publishedOutcomesRemoved = try connection.repeatUntilDone(batchSize: batchSize) { OutboxTable.deletePublished(limit: $0) }
        report.sessionsRemoved = try connection.repeatUntilDone(batchSize: batchSize) { SessionsTable.deleteExpired(before: now - sessionKeep, limit: $0) }
        report.oldestOverdueAfterSeconds = try Self.oldestOverdue(now: now, on: connection)
        return report
    }

    static func oldestOverdue(now: Date, on connection: PostgresConnection) throws -> Double {
        let result = try connection.execute(ElementValuesTable.oldestOverdue(at: now))
        return max(0, result.double(0, "age") ?? 0)
    }
}
