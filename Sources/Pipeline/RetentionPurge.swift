import Foundation
import Observability
import Postgres
import Storage
import Retention

/// The worker's purge thread: one `Purger` pass every interval on its own
/// connection, so expiry never waits for, or holds up, the write path. A
/// pass logs counts and ages only (values purged, oldest overdue age) and
/// sets the purge metrics from them; a failed one is retried next interval.
enum RetentionPurge {
    static func loop(
        _ configuration: RetentionConfiguration, partitions: ValuePartitions, connect: @escaping @Sendable () throws -> PostgresConnection, log: Logger,
        metrics: PipelineMetrics
    ) -> PeriodicPass<PurgeReport> {
        if configuration.keys == nil {
            log.warning("retention.dataKeys not configured: no element value is stored (metadata only)")
        }
        let interval = configuration.purgeInterval
        let purger = Purger(batchSize: configuration.purgeBatchSize, partitions: partitions, sessionKeep: configuration.sessionKeep)
        return PeriodicPass(
            name: "veridoc-purge", interval: interval, connect: connect, pass: { try purger.pass(now: Date(), on: $0) },
            report: { result in
                switch result {
                case .success(let report):
                    metrics.purgeLag.set(report.oldestOverdueSeconds)
                    metrics.valuesPurged.increment(by: Double(report.purged))
                    let fields = ["purged": "\(report.purged)", "droppedPartitions": "\(report.droppedPartitions)",
                                  "oldestOverdueSeconds": String(format: "%.1f", report.oldestOverdueSeconds),
                                  "publishedOutcomesRemoved": "\(report.publishedOutcomesRemoved)", "sessionsRemoved": "\(report.sessionsRemoved)"]
                    if report.oldestOverdueSeconds > interval {
                        log.warning("purge pass found values overdue by more than one interval", fields)
                    } else if report.purged > 0 || report.publishedOutcomesRemoved > 0 {
                        log.info("purge pass", fields)
                    } else {
                        log.debug("purge pass", fields)
                    }
                case .failure(let error):
                    log.warning("purge pass failed; retrying next interval", ["code": (error as? PostgresError)?.sqlState ?? "error"])
                }
            })
    }
}
