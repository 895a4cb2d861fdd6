import Deployment
import Foundation
import Kafka
import KafkaMock
import Observability
import Pipeline
import Postgres
import Storage
import Synchronization
import TestIssuer
import Verification

/// `veridoc-dev demo`: the main job on embedded defaults. It starts its own
/// PostgreSQL and Kafka-protocol broker (librdkafka's mock cluster), makes a
/// tenant and a test issuer, produces a realistic stream through the load
/// generator, runs the real worker against it, shows progress, and ends with
/// a summary checked against the database — then stops everything it started.
public final class Demo: @unchecked Sendable {
    public struct Options: Sendable {
        public var events = 5000
        /// Events per second; nil produces as fast as the broker takes them.
        public var rate: Double?
        public var workers = ProcessInfo.processInfo.activeProcessorCount
        public var keep = false
        public var seed: UInt64 = 2026
        public var mix: LoadGenerator.Mix = .realistic
        /// Overrides the synthetic holder's family name (tests plant a value and look for leaks).
        public var familyName: String?
        public init() {}
    }

    public struct Summary: Sendable {
        public var produced = 0
        public var distinctIDs = 0
        public var stored = 0
        public var verified = 0
        public var rejected = 0
        public var deadLettered = 0
        public var outcomes = 0
        public var byReason: [(verdict: String, reason: String, count: Int)] = []
        public var eventsPerSecond = 0.0
        public var latencyP50 = 0.0
        public var latencyP99 = 0.0
        public var consistent: Bool { stored == distinctIDs && outcomes == distinctIDs }
    }

    private let options: Options
    private let print: @Sendable (String) -> Void
    private let progress: @Sendable (String) -> Void

    public init(options: Options, print: @escaping @Sendable (String) -> Void, progress: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.print = print
        self.progress = progress
    }

    public func run() throws -> Summary {
        let directory = URL(fileURLWithPath: "/tmp/veridoc-demo-\(UUID().uuidString.prefix(8).lowercased())")
        let removeDirectory = Interruption.register { try? FileManager.default.removeItem(at: directory) }
        defer { Interruption.unregister(removeDirectory) }
        print("Starting PostgreSQL (initdb into \(directory.path)/pg) …")
        let postgres = try EmbeddedPostgres(directory: directory.appendingPathComponent("pg"))
        var keepDatabase = false
        defer {
            postgres.stop(keepFiles: keepDatabase)
            // The config folder holds the demo tenant's private keys: gone with the demo.
            if !keepDatabase { try? FileManager.default.removeItem(at: directory) }
        }

        print("Starting the Kafka-protocol broker (librdkafka mock cluster, 3 brokers) …")
        let cluster = try MockCluster(brokers: 3)
        defer { cluster.close() }
        for topic in ["veridoc.requests", "veridoc.outcomes", "veridoc.requests.dlq"] {
            try cluster.createTopic(topic, partitions: 6)
        }

        print("Making a demo tenant, its merchant keys and a test issuer …")
        var factory = try TestIssuer.EventFactory(now: Date(), seed: options.seed)
        if let familyName = options.familyName {
            factory.credential[TestIssuer.Credential.mDLNameSpace, "family_name"] = .text(familyName)
        }
        let configURL = try writeConfiguration(factory: factory, directory: directory.appendingPathComponent("config"),
                                               bootstrap: cluster.bootstrapServers, postgres: postgres.connectionString)

        print("Generating \(options.events) events (\(describe(options.mix))) …")
        var generator = LoadGenerator(factory: factory, mix: options.mix, seed: options.seed &+ 1)
        var records: [LoadGenerator.Record] = []
        records.reserveCapacity(options.events)
        for _ in 0..<options.events { records.append(try generator.next()) }
        let ids = Set(records.compactMap(\.id))
        let corpus = records

        let deployment = try Deployment.load(from: configURL)
        let configuration = try WorkerConfiguration.load(deployment)
        let migration = try PostgresConnection(connectionString: configuration.postgres, applicationName: "veridoc-demo")
        try Migrations.apply(on: migration)
        let worker = try Worker(configuration: configuration, directory: deployment.tenants, log: Logger(minimum: ProcessInfo.processInfo.environment["VERIDOC_LOG_LEVEL"].flatMap(Logger.Level.init(name:)) ?? .error))
        let workerDone = DispatchSemaphore(value: 0)
        let workerThread = Thread {
            do { try worker.run() } catch { FileHandle.standardError.write(Data("veridoc: worker failed: \(error)\n".utf8)) }
            workerDone.signal()
        }
        workerThread.name = "veridoc-demo-worker"
        workerThread.start()

        // Produce once the worker owns its partitions, so latency measures work, not the group join.
        let joinDeadline = Date().addingTimeInterval(60)
        while worker.assignedPartitionCount == 0 && Date() < joinDeadline { Thread.sleep(forTimeInterval: 0.05) }

        let clock = LatencyClock()
        let reader = try OutcomeReader(bootstrap: cluster.bootstrapServers, clock: clock)
        reader.start()
        defer { reader.stop() }
        // And once the outcome reader owns its partitions too: its group join (about 3 s
        // with the mock broker) would otherwise count as every early event's latency.
        while !reader.isAssigned && Date() < joinDeadline { Thread.sleep(forTimeInterval: 0.05) }

        print("Producing to veridoc.requests\(options.rate.map { " at \(Int($0))/s" } ?? "") while the worker runs (\(configuration.workers) verification threads) …")
        let started = Date()
        let producer = try RateLimitedProducer(bootstrap: cluster.bootstrapServers, rate: options.rate)
        let produced = ProducedCounter()
        let deadline = Date().addingTimeInterval(180 + Double(options.events) / max(options.rate ?? 1000, 1))
        // Records the worker has durably consumed (its positions in PostgreSQL), sampled below.
        let consumed = Atomic<Int>(0)
        let producing = Thread {
            for (index, record) in corpus.enumerated() {
                // The mock broker keeps only a few MB a partition: records produced too far
                // ahead of the worker are trimmed before it reads them. A window ahead keeps
                // the worker fed and loses none.
                while index - consumed.load(ordering: .relaxed) >= Self.aheadOfTheWorker && Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.005)
                }
                producer.send(topic: "veridoc.requests", record: record) {
                    if let id = record.id { clock.produced(id) }
                }
                produced.increment()
            }
            producer.flush()
            produced.finish()
        }
        producing.start()

        var summary = Summary()
        summary.produced = records.count
        summary.distinctIDs = ids.count
        var lastProgress = Date.distantPast
        var lastStoredAt = Date()
        var lastStored = 0
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.25)
            if let records = try? consumedRecords(migration) { consumed.store(records, ordering: .relaxed) }
            let counts = (try? verdictCounts(migration)) ?? (0, 0)
            let stored = counts.0 + counts.1
            if stored != lastStored { lastStored = stored; lastStoredAt = Date() }
            let outcomes = reader.count
            if Date().timeIntervalSince(lastProgress) >= 0.5 {
                lastProgress = Date()
                let elapsed = max(Date().timeIntervalSince(started), 0.001)
                progress(String(
                    format: "produced %d/%d · stored %d (verified %d, rejected %d) · outcomes %d · dead letters %d · %.0f events/s · lag %d",
                    produced.value, records.count, stored, counts.0, counts.1, outcomes, worker.counts.deadLettered,
                    Double(stored) / elapsed, produced.value - stored - worker.counts.deadLettered))
            }
            if produced.isFinished && stored >= ids.count && outcomes >= ids.count { break }
        }
        progress("")
        let elapsed = lastStoredAt.timeIntervalSince(started)

        worker.requestStop()
        _ = workerDone.wait(timeout: .now() + 60)
        producer.close()

        let counts = try verdictCounts(migration)
        summary.verified = counts.0
        summary.rejected = counts.1
        summary.stored = counts.0 + counts.1
        summary.deadLettered = worker.counts.deadLettered
        summary.outcomes = reader.count
        summary.byReason = try reasonCounts(migration)
        summary.eventsPerSecond = Double(summary.stored) / max(elapsed, 0.001)
        let latencies = clock.latencies.sorted()
        if !latencies.isEmpty {
            summary.latencyP50 = latencies[latencies.count / 2]
            summary.latencyP99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
        }
        migration.close()
        printSummary(summary)

        if options.keep {
            keepDatabase = true
            print("""

                The database is kept and still running:
                  psql "\(postgres.connectionString)"
                  results: SELECT verdict, reason_codes, doc_type, issuer_country FROM results LIMIT 10;
                  veridoc stats --config \(configURL.path)
                  veridoc report --config \(configURL.path) --html report.html
                Stop it and remove everything the demo made (database, config, keys):
                  \(stopCommand(postgres, removing: directory))
                """)
            postgres.detach()
        }
        return summary
    }

    /// Stops the kept server and removes `directory`, which holds it and the
    /// config folder with the demo tenant's private keys.
    private func stopCommand(_ postgres: EmbeddedPostgres, removing directory: URL) -> String {
        let data = postgres.directory.appendingPathComponent("data").path
        let pgctl = "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl"
        let stop = getuid() == 0 ? "runuser -u postgres -- \(pgctl) -D \(data) stop" : "\(pgctl) -D \(data) stop"
        return "\(stop) && rm -rf \(directory.path)"
    }

    private func describe(_ mix: LoadGenerator.Mix) -> String {
        let total = Double(mix.weights.reduce(0) { $0 + $1.1 })
        return mix.weights.filter { $0.1 > 0 }.map { String(format: "%@ %.1f%%", $0.0.rawValue, 100 * Double($0.1) / total) }.joined(separator: ", ")
    }

    private func writeConfiguration(factory: TestIssuer.EventFactory, directory: URL, bootstrap: String, postgres: String) throws -> URL {
        let file = try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca])
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        root["kafka"] = ["bootstrapServers": bootstrap, "groupId": "veridoc-demo",
                         "properties": ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "5"]]
        root["postgres"] = ["connectionString": postgres]
        root["worker"] = ["threads": options.workers, "batchSize": 500, "batchLingerMilliseconds": 10]
        root["replay"] = ["nonceKeyFile": "pki/nonce.key"]
        let keyPath = directory.appendingPathComponent("pki/nonce.key").path
        _ = FileManager.default.createFile(atPath: keyPath, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(),
                                           attributes: [.posixPermissions: 0o600])
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]).write(to: file)
        return file
    }

    /// How far ahead of the worker's stored positions the producer may run:
    /// about half a second of work at the demo's rates, well inside what the
    /// mock broker keeps of six partitions of ~10 KB records.
    static let aheadOfTheWorker = 1_000

    /// Records of `veridoc.requests` the worker has consumed and stored (its
    /// positions start at offset 0 of each partition of the fresh topic).
    private func consumedRecords(_ connection: PostgresConnection) throws -> Int {
        let result = try connection.execute("SELECT coalesce(sum(next_offset), 0)::bigint AS n FROM consumer_positions WHERE topic = 'veridoc.requests'")
        return Int(result.int(0, "n") ?? 0)
    }

    private func verdictCounts(_ connection: PostgresConnection) throws -> (Int, Int) {
        let result = try connection.execute("SELECT count(*) FILTER (WHERE verdict = 'verified') AS v, count(*) FILTER (WHERE verdict = 'rejected') AS r FROM results")
        return (Int(result.int(0, "v") ?? 0), Int(result.int(0, "r") ?? 0))
    }

    private func reasonCounts(_ connection: PostgresConnection) throws -> [(verdict: String, reason: String, count: Int)] {
        let result = try connection.execute("""
            SELECT verdict, coalesce(reason, '—') AS reason, count(*) AS count
            FROM results LEFT JOIN LATERAL unnest(reason_codes) AS reason ON true
            GROUP BY verdict, reason ORDER BY verdict DESC, count DESC, reason
            """)
        return (0..<result.rowCount).map { (result.string($0, "verdict") ?? "", result.string($0, "reason") ?? "", Int(result.int($0, "count") ?? 0)) }
    }

    private func printSummary(_ summary: Summary) {
        print("")
        print("Summary")
        print(String(repeating: "─", count: 60))
        print(String(format: "  events produced            %7d  (%d distinct event ids)", summary.produced, summary.distinctIDs))
        print(String(format: "  results stored             %7d  %@", summary.stored, summary.stored == summary.distinctIDs ? "✓ one per event id" : "✗ expected \(summary.distinctIDs)"))
        print(String(format: "  outcome events             %7d  %@", summary.outcomes, summary.outcomes == summary.distinctIDs ? "✓ one per event id" : "✗ expected \(summary.distinctIDs)"))
        print(String(format: "  dead-lettered records      %7d", summary.deadLettered))
        print(String(format: "  verified / rejected        %7d / %d", summary.verified, summary.rejected))
        print("")
        print("  verdict    reason                               count")
        for row in summary.byReason {
            print("  \(row.verdict.padding(toLength: 10, withPad: " ", startingAt: 0)) \(row.reason.padding(toLength: 36, withPad: " ", startingAt: 0)) \(String(format: "%6d", row.count))")
        }
        print("")
        print(String(format: "  throughput                 %7.0f events/s (produce → stored)", summary.eventsPerSecond))
        print(String(format: "  end-to-end latency         p50 %.1f ms · p99 %.1f ms (produced → outcome delivered)", summary.latencyP50 * 1000, summary.latencyP99 * 1000))
        print(String(repeating: "─", count: 60))
    }
}
