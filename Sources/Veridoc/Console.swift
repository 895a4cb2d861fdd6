import Foundation
import Postgres
import Verification

enum Console {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data(("veridoc: " + message + "\n").utf8))
    }

    /// A progress note on stderr (empty text: nothing), so stdout keeps only the report.
    static func progress(_ message: String) {
        guard !message.isEmpty else { return }
        FileHandle.standardError.write(Data(("… " + message + "\n").utf8))
    }
}

enum Usage {
    static let text = """
        usage: veridoc <command> [options]

          verify --config FILE [--at RFC3339] [--json] EVENT.json|-
                 Verify one veridoc.verification.requested.v1 event. Exit 0 verified, 1 rejected, 2 usage/config error.
          demo [--events N] [--rate R] [--workers W] [--keep] [--seed S] [--mix M]
                              The main job on embedded defaults: its own PostgreSQL and broker, a test issuer,
                              a realistic stream through the real worker, a summary checked against the database.
          bench [--quick] [--events N] [--seconds S] [--duration D] [--threads T] [--backlog N] [--output DIR] [--skip-e2e] [--skip-scaling]
                              Crypto ceiling, verify pool, end to end (worker processes, broker, PostgreSQL) and scaling;
                              a table on stdout, DIR/latest.json and DIR/latest.md (default DIR bench/results);
                      --backlog N: events staged before a worker starts (default 100000; 0 skips).
          bench --hostile-only [--quick] [--hostile-bytes B] [--hostile-runs R] [--hostile-timeout S] [--hostile-keep DIR] [--output DIR]
                              The hostile-input row alone (also in a full run, unless --skip-hostile): the worst event
                              per dimension at B bytes (default 4 MiB) beside a valid event of that size; DIR/hostile.*.
          bench --profile-verify N [--issuers I --tenants T]
                              Generate N events, then only verify them on one thread (for valgrind/perf).
          loadgen --bootstrap SERVERS [--topic T] [--rate R] [--count N] [--mix M] [--fixture DIR] [--seed S]
                              Synthetic requests (mix: realistic, valid, or kind=weight,…) for the tenant in DIR.
          run --config FILE   The worker: Kafka → verification pool → PostgreSQL → outcome events (SIGTERM drains and exits 0).
          migrate --config FILE
                              Apply the database migrations and exit.
          keys generate DIR   New P-256 merchant encryption key and self-signed certificate; prints pkRHash.
          keys hash FILE      pkRHash (SHA-256 of the uncompressed public key) of a PEM key or certificate.
          keys generate-data-key FILE
                              New AES-256 data key for stored element values (mode 0600).
          keys rotate-data-key --config FILE
                              Re-encrypt stored values under retention.activeKey.
          purge --config FILE [--now RFC3339]
                              One pass deleting element values past retain_until (--now: as if it were then).
          forget --config FILE (--request ID | --tenant T)
                              Erase retained values (right to erasure); outcome facts stay.
          stats --config FILE [--since DURATION] [--tenant T]
                              Outcome counts, reasons and latency (default --since 24h; counts 1–4 as <5).
          report --config FILE --html OUT [--since DURATION] [--tenant T]
                              Self-contained HTML page with charts.
          chaos [--duration S] [--events N] [--faults N] [--seed S] [--workers W] [--broker mock|tansu] [--output FILE] [--keep]
                              Fault injection: workers, broker and PostgreSQL of its own under seeded faults; invariants checked.
          dev-broker [--brokers N] [--topic NAME:PARTITIONS]... [--parent-pid PID] [--rebalance-delay-ms MS]
                 In-process mock Kafka cluster for development/tests: prints BOOTSTRAP=<list>, runs until SIGTERM/SIGINT.
                 stdin commands (answer OK / ERR <reason>): down ID | up ID | errors APIKEY CODE[,CODE…] | topic NAME PARTITIONS
        """
}

/// A usage problem: printed with the usage text, exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Splits `--name value` options and `--flag`s from positional arguments.
struct ParsedArguments {
    var options: [String: String] = [:]
    var flags: Set<String> = []
    var positional: [String] = []

    init(_ arguments: [String], options known: Set<String>, flags knownFlags: Set<String>) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if known.contains(argument) {
                guard index + 1 < arguments.count else { throw UsageError("\(argument) needs a value") }
                options[argument] = arguments[index + 1]
                index += 2
            } else if knownFlags.contains(argument) {
                flags.insert(argument)
                index += 1
            } else if argument.hasPrefix("--") {
                throw UsageError("unknown option \(argument)")
            } else {
                positional.append(argument)
                index += 1
            }
        }
    }
}

/// Runs a command body and maps what it threw to the exit status: 0 on
/// success, 2 for usage and configuration errors (message on stderr), 1
/// otherwise.
enum ExitStatus {
    static func of(_ body: () throws -> Void) -> Int32 {
        do {
            try body()
            return 0
        } catch let error as UsageError {
            Console.error("\(error.message)\n\n\(Usage.text)")
        } catch let error as ConfigError {
            Console.error("config: \(error.message)")
        } catch let error as PostgresError {
            Console.error("postgres: \(error.sqlState ?? "connection") \(error.message)")
            return 1
        } catch {
            Console.error("\(error)")
            return 1
        }
        return 2
    }
}
