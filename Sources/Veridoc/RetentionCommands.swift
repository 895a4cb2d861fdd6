import CommandLineSupport
import Deployment
import Foundation
import MDoc
import Postgres
import Storage
import Retention
import Settings
import Verification

/// `veridoc purge`, `veridoc forget`, `veridoc keys generate-data-key` and
/// `veridoc keys rotate-data-key` (docs/retention.md). They print counts,
/// never values.
enum RetentionCommands {
    /// One purge pass. `--now` purges as if it were that time (tests and
    /// what-ifs); it erases for real whatever would have expired by then.
    static func purge(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let parsed = try ParsedArguments(arguments, options: ["--config", "--now"], flags: [])
            let deployment = try ConfigFile.read(parsed)
            var now = Date()
            if let text = parsed.options["--now"] {
                guard let date = RFC3339.date(from: text) else { throw UsageError("--now takes an RFC 3339 time") }
                now = date
            }
            let retention = deployment.retention
            let connection = try connect(deployment)
            defer { connection.close() }
            let report = try Purger(batchSize: retention.purgeBatchSize, sessionKeep: retention.sessionKeep).pass(now: now, on: connection)
            print("purged \(report.purged) values (\(report.droppedPartitions) partitions dropped); "
                  + "oldest overdue was \(String(format: "%.0f", report.oldestOverdueSeconds)) s; removed \(report.publishedOutcomesRemoved) published outcomes from the outbox and \(report.sessionsRemoved) expired sessions")
        }
    }

    static func forget(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let parsed = try ParsedArguments(arguments, options: ["--config", "--request", "--tenant"], flags: [])
            let deployment = try ConfigFile.read(parsed)
            let retention = deployment.retention
            let eraser = Eraser(batchSize: retention.purgeBatchSize)
            let connection = try connect(deployment)
            defer { connection.close() }
            let erased: Eraser.Erased
            switch (parsed.options["--request"], parsed.options["--tenant"]) {
            case (let request?, nil): erased = try eraser.forget(request: request, on: connection)
            case (nil, let tenant?): erased = try eraser.forget(tenant: tenant, on: connection)
            default: throw UsageError("forget needs exactly one of --request ID and --tenant T")
            }
            print("erased \(erased.values) values, \(erased.statusReferences) revocation references, \(erased.submissions) responses waiting for the broker "
                  + "and the sealed claims of \(erased.claims) outcomes; kept \(erased.resultsKept) results")
        }
    }

    static func generateDataKey(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            guard arguments.count == 1 else { throw UsageError("keys generate-data-key FILE") }
            try DataKeyRing.generateKeyFile(URL(fileURLWithPath: try ParsedArguments.path(arguments[0])))
            print("data key written to \(arguments[0]) (mode 0600); add it to retention.dataKeys")
        }
    }

    static func rotateDataKey(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            let parsed = try ParsedArguments(arguments, options: ["--config"], flags: [])
            let deployment = try ConfigFile.read(parsed)
            let retention = deployment.retention
            guard let keys = retention.keys else { throw ConfigError("retention.dataKeys: no data keys configured") }
            let connection = try connect(deployment)
            defer { connection.close() }
            let outcome = try KeyRotation(keys: keys, batchSize: retention.purgeBatchSize).run(on: connection)
            print("re-encrypted \(outcome.reencrypted) values under data key \(keys.activeID)")
            if outcome.unknownKey > 0 {
                print("\(outcome.unknownKey) values are under data keys no longer configured; they cannot be read or rotated")
                throw RetentionError("values under unknown data keys remain")
            }
        }
    }

    /// A connection with the file's `postgres` settings, to a database whose
    /// schema this binary knows.
    static func connect(_ deployment: Deployment) throws -> PostgresConnection {
        let postgres = deployment.settings.postgres
        let connection = try PostgresConnection(connectionString: postgres.connectionString, applicationName: "veridoc-cli",
                                                preparedStatements: postgres.preparedStatements)
        do {
            try Migrations.checkVersion(on: connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }
}
