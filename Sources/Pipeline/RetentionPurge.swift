import Foundation
import Observability
import Postgres
import Storage
import Retention

/// Wires the worker's purge loop to its configuration and log. A pass logs
/// counts and ages only (values purged, oldest overdue age) and sets the
/// purge metrics from them.
enum RetentionPurge {
    static func loop(
        _ configuration: RetentionConfiguration, partitions: ValuePartitions, connect: @escaping @Sendable () throws -> PostgresConnection, log: Logger,
        metrics: PipelineMetrics
    ) -> PurgeLoop {
        if configuration.keys == nil {
            log.warning("retention.dataKeys not configured: no element value is stored (metadata only)")
        }
        let interval = configuration.purgeInterval
        return PurgeLoop(
            interval: interval, purger: Purger(batchSize: configuration.purgeBatchSize, partitions: partitions, sessionKeep: configuration.sessionKeep), connect: connect,
            onPass: { result in
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
