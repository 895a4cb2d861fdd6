import DemoKit
import Foundation
import Kafka
import KafkaMock
import Postgres
import TestIssuer
import Verification

/// The end-to-end stages of `make bench`: `veridoc run` worker processes
/// against a Kafka-protocol broker (librdkafka's mock cluster, in this
/// process), an embedded PostgreSQL and the outbox publisher, measured from
/// the outside: outcome events read back from the outcome topic, peak RSS and
/// CPU time from /proc of each worker process.
///
/// Every run gets a fresh broker and a fresh database, so the same
/// pre-generated corpus can be replayed run after run without tripping the
/// nonce single-use check.
public final class EndToEndBench: @unchecked Sendable {
    public struct Run: Codable, Sendable {
        public var workers: Int
        public var threadsPerWorker: Int
        /// Events counted in the measured window.
        public var events: Int
        public var seconds: Double
        public var eventsPerSecond: Double
        /// The highest VmHWM of any worker process, MB.
        public var peakRSSMegabytes: Double
        /// Worker processes' user + system CPU in the window ÷ events, ms.
        public var cpuMillisecondsPerEvent: Double
        /// The same for the PostgreSQL server (postmaster and every backend).
        public var postgresCPUMillisecondsPerEvent: Double?
        /// The same for this process: the mock broker, the load generator and
        /// the outcome reader, which share the machine with the worker.
        public var harnessCPUMillisecondsPerEvent: Double?
        public var latencyP50Milliseconds: Double?
        public var latencyP99Milliseconds: Double?
        public var latencyP999Milliseconds: Double?
        /// The offered rate of a latency run.
        public var offeredRate: Double?
        public var verified: Int
        /// Events produced in the run (the backlog a peak run starts from).
        public var produced: Int = 0
        /// A backlog run: seconds from the worker's start to its last outcome
        /// (process start and group join included; the rate above is measured,
        /// like the peak's, between the 10th and the 90th percent: of events
        /// stored, where the peak counts outcomes read back).
        public var drainSeconds: Double?
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let corpus: [LoadGenerator.Record]
    private let factory: TestIssuer.EventFactory
    private let binary: String
    private let postgres: EmbeddedPostgres
    private let directory: URL
    private let partitions: Int32
    private let progress: @Sendable (String) -> Void
    private var runNumber = 0

    public init(corpus: [LoadGenerator.Record], factory: TestIssuer.EventFactory, binary: String, postgres: EmbeddedPostgres,
                directory: URL, partitions: Int32 = 12, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.corpus = corpus
        self.factory = factory
        self.binary = binary
        self.postgres = postgres
        self.directory = directory
        self.partitions = partitions
        self.progress = progress
    }

    /// Generates `count` valid Apple in-app events on `threads` threads (each
    /// generator a copy of `factory` with its own seed, so ids and nonces differ).
    public static func corpus(factory: TestIssuer.EventFactory, count: Int, threads: Int, seed: UInt64) throws -> [LoadGenerator.Record] {
        let threads = max(1, min(threads, count))
        let parts = Parts(count: threads)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var copy = factory
            copy.random = TestIssuer.SeededRandom(seed: seed &+ UInt64(thread) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
            var generator = LoadGenerator(factory: copy, mix: .benchmark, seed: seed &+ UInt64(thread))
            generator.flowWeights = [(.appleWalletApp, 1)]
            var records: [LoadGenerator.Record] = []
            let share = count / threads + (thread < count % threads ? 1 : 0)
            records.reserveCapacity(share)
            do {
                for _ in 0..<share { records.append(try generator.next()) }
                parts.set(thread, .success(records))
            } catch {
                parts.set(thread, .failure(error))
            }
        }
        var all: [LoadGenerator.Record] = []
        for part in parts.results { all += try part.get() }
        return all
    }

    /// Produces the whole corpus (as fast as the broker takes it) to `workers`
    /// worker processes that have joined the group; the rate is measured over
    /// the middle 80 % of outcomes, so start-up and the tail do not count.
    public func throughput(workers: Int, threadsPerWorker: Int, events: Int? = nil) throws -> Run {
        let records = Array(corpus.prefix(events ?? corpus.count))
        return try session(workers: workers, threadsPerWorker: threadsPerWorker) { environment in
            let producer = try RateLimitedProducer(bootstrap: environment.bootstrap, rate: nil)
            defer { producer.close() }
            // librdkafka's mock broker keeps only a few MB per partition and
            // drops the oldest records beyond that, so the backlog is held at
            // `window` events ahead of the outcomes: always enough to keep the
            // worker saturated, never more than the mock broker keeps.
            let reader = environment.reader
            let window = 2000
            let producing = Thread {
                for (index, record) in records.enumerated() {
                    while index - reader.count >= window { Thread.sleep(forTimeInterval: 0.002) }
                    producer.send(topic: "veridoc.requests", record: record)
                }
                producer.flush()
            }
            producing.start()
            let target = records.count
            let low = max(1, target / 10), high = max(low + 1, target * 9 / 10)
            var start: (Date, Int, CPUSample)?
            var end: (Date, Int, CPUSample)?
            let deadline = Date().addingTimeInterval(120 + Double(target) / 50)
            while Date() < deadline {
                let count = environment.reader.count
                if start == nil && count >= low { start = (Date(), count, environment.cpu()) }
                if end == nil && count >= high { end = (Date(), count, environment.cpu()) }
                // The window ends at 90 %: the mock broker can lose a few hundred
                // records of a long run, so the tail is not waited for.
                if end != nil { break }
                Thread.sleep(forTimeInterval: 0.01)
            }
            guard let start, let end else { throw Failure(description: "only \(environment.reader.count) of \(target) outcomes arrived") }
            return Run(workers: workers, threadsPerWorker: threadsPerWorker, between: start, and: end, peakRSSMegabytes: environment.peakRSS(),
                       verified: environment.verified(), produced: target)
        }
    }

    /// Offers `rate` events/s for `seconds` to `workers` joined worker
    /// processes; latency is produce time → outcome read from the outcome topic.
    public func latency(rate: Double, seconds: Double, workers: Int, threadsPerWorker: Int) throws -> Run {
        let count = min(corpus.count, max(1, Int(rate * seconds)))
        let records = Array(corpus.prefix(count))
        return try session(workers: workers, threadsPerWorker: threadsPerWorker) { environment in
            let producer = try RateLimitedProducer(bootstrap: environment.bootstrap, rate: rate, properties: ["linger.ms": "0"])
            defer { producer.close() }
            // The load generator's own start-up (its first metadata lookup) is not the worker's latency.
            producer.prepare(topics: ["veridoc.requests"])
            let clock = environment.clock
            let cpuStart = environment.cpu()
            let started = Date()
            let producing = Thread {
                for record in records {
                    producer.send(topic: "veridoc.requests", record: record) { if let id = record.id { clock.produced(id) } }
                }
                producer.flush()
            }
            producing.start()
            let deadline = Date().addingTimeInterval(60 + seconds * 2)
            while environment.reader.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            let elapsed = Date().timeIntervalSince(started)
            let used = environment.cpu() - cpuStart
            let delivered = environment.reader.count
            guard delivered >= count else { throw Failure(description: "only \(delivered) of \(count) outcomes arrived") }
            let latencies = clock.latencies.sorted()
            func percentile(_ p: Double) -> Double? {
                latencies.isEmpty ? nil : 1000 * latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            }
            let perEvent = 1000 / Double(max(delivered, 1))
            return Run(workers: workers, threadsPerWorker: threadsPerWorker, events: delivered, seconds: elapsed,
                       eventsPerSecond: Double(delivered) / elapsed, peakRSSMegabytes: environment.peakRSS(),
                       cpuMillisecondsPerEvent: used.worker * perEvent, postgresCPUMillisecondsPerEvent: used.postgres * perEvent,
                       harnessCPUMillisecondsPerEvent: used.harness * perEvent,
                       latencyP50Milliseconds: percentile(0.5), latencyP99Milliseconds: percentile(0.99),
                       latencyP999Milliseconds: percentile(0.999), offeredRate: rate, verified: environment.verified(), produced: count)
        }
    }

    /// A backlog staged before any worker runs — `events` records spread
    /// over enough partitions that the mock broker keeps them all (it trims
    /// each partition to a few MB; 1 MB per partition is used) — then drained by one worker process while
    /// its RSS is sampled. Where the corpus is shorter than `events`, it is
    /// repeated with fresh event ids: the repeats go through the same
    /// reading and verification and are then rejected by the nonce check.
    /// The worker's memo of verified signatures is off here, so that the
    /// repeats cost what unique credentials cost (the peak's measure).
    public func backlog(events: Int, threadsPerWorker: Int) throws -> Run {
        let bytes = (0..<events).reduce(0) { $0 + corpus[$1 % corpus.count].value.count }
        // The mock broker trims partitions beyond a few MB: about 1 MB of requests (and their
        // outcomes) per partition. Records are keyed afresh over four keys a partition: the
        // corpus's 64 session keys would hash the whole backlog onto at most 64 partitions,
        // whose early records the broker then drops.
        let partitions = Int32(max(Int(self.partitions), min(1000, bytes / (1 << 20) + 1)))
        let keys = Int(partitions) * 4
        let records = (0..<events).map { index in
            Self.copy(corpus[index % corpus.count], number: index / corpus.count, key: Array("backlog-\(index % keys)".utf8))
        }
        return try session(workers: 1, threadsPerWorker: threadsPerWorker, requestPartitions: partitions, signatureMemo: false, stage: { bootstrap in
            let producer = try RateLimitedProducer(bootstrap: bootstrap, rate: nil)
            defer { producer.close() }
            for record in records { producer.send(topic: "veridoc.requests", record: record) }
            producer.flush()
        }) { environment in
            // The worker starts draining as soon as it joins: the whole drain is
            // timed from its start; rate and CPU per event, as for the peak,
            // between the 10th and the 90th percent, so that start-up and group
            // join do not pass for a cost of the backlog. The marks go by what
            // the worker has stored (its consumer positions, committed with each
            // batch: the backlog starts at offset 0 of every partition), not by
            // outcomes read back: over ~1,000 partitions the reader falls behind
            // and catches up in bursts, which would distort the window's rate.
            let started = environment.spawnedAt
            let low = max(1, events / 10), high = max(low + 1, events * 9 / 10)
            let positions = try PostgresConnection(connectionString: environment.database, applicationName: "veridoc-bench")
            defer { positions.close() }
            func stored() -> Int {
                // Before the worker's migrations have made the table, nothing is stored.
                Int((try? positions.execute("SELECT COALESCE(sum(next_offset), 0)::bigint AS n FROM consumer_positions").int(0, "n")) ?? 0)
            }
            // The group is stable by now, and a small backlog may be past its
            // first mark: its window then starts at this first look.
            let first = (Date(), stored(), environment.cpu())
            var window: (start: (Date, Int, CPUSample)?, end: (Date, Int, CPUSample)?)
            // Given up when no outcome arrives for a minute (a record lost upstream
            // would otherwise hold the run until a deadline scaled to the backlog).
            var lastCount = 0
            var lastProgress = Date()
            var peakRSS = 0.0
            while Date().timeIntervalSince(lastProgress) < 60 {
                peakRSS = max(peakRSS, environment.peakRSS())
                if window.end == nil {
                    let done = stored()
                    if window.start == nil && done >= low && done < high { window.start = (Date(), done, environment.cpu()) }
                    if done >= high { window.end = (Date(), done, environment.cpu()) }
                }
                let count = environment.reader.count
                if count >= events { break }
                if count > lastCount { (lastCount, lastProgress) = (count, Date()) }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let drainSeconds = Date().timeIntervalSince(started)
            let delivered = environment.reader.count
            guard delivered >= events, let end = window.end else {
                throw Failure(description: "only \(delivered) of \(events) backlog outcomes arrived")
            }
            let start = window.start ?? first
            // A window of at least a fifth of the backlog and a second.
            guard end.1 - start.1 >= max(1, events / 5), end.0.timeIntervalSince(start.0) >= 1 else {
                // Drained (nearly) before the group was stable: only the whole drain can be timed.
                var run = Run(workers: 1, threadsPerWorker: threadsPerWorker, events: delivered, seconds: drainSeconds,
                              eventsPerSecond: Double(delivered) / max(drainSeconds, 1e-6), peakRSSMegabytes: max(peakRSS, environment.peakRSS()),
                              cpuMillisecondsPerEvent: 1000 * environment.cpuSeconds() / Double(max(delivered, 1)),
                              verified: environment.verified(), produced: events)
                run.drainSeconds = drainSeconds
                return run
            }
            var run = Run(workers: 1, threadsPerWorker: threadsPerWorker, between: start, and: end,
                          peakRSSMegabytes: max(peakRSS, environment.peakRSS()), verified: environment.verified(), produced: events)
            run.drainSeconds = drainSeconds
            return run
        }
    }

    /// `record` under `key`, with its event id changed in place (same length) for copy `number` > 0.
    static func copy(_ record: LoadGenerator.Record, number: Int, key: [UInt8]? = nil) -> LoadGenerator.Record {
        let key = key ?? record.key
        guard number > 0, let id = record.id, id.utf8.count >= 8 else {
            return LoadGenerator.Record(key: key, value: record.value, id: record.id, kind: record.kind, flow: record.flow)
        }
        let marker = Array("\"id\":\"".utf8) + Array(id.utf8)
        var value = record.value
        guard let start = value.firstRange(of: marker)?.lowerBound else { return record }
        let suffix = Array(String(format: "%08x", UInt32(truncatingIfNeeded: number)).utf8)
        let end = start + marker.count
        value.replaceSubrange(end - 8..<end, with: suffix)
        let newID = String(id.dropLast(8)) + String(decoding: suffix, as: UTF8.self)
        return LoadGenerator.Record(key: key, value: value, id: newID, kind: record.kind, flow: record.flow)
    }

    // MARK: - One run: broker, database, worker processes

    struct Environment {
        let bootstrap: String
        let reader: OutcomeReader
        let clock: LatencyClock
        let processes: [WorkerProcess]
        let database: String
        /// When the worker processes were started.
        let spawnedAt: Date

        /// The server's postmaster, whose process tree is PostgreSQL's CPU.
        let postmaster: pid_t?

        func cpuSeconds() -> Double { processes.reduce(0) { $0 + $1.cpuSeconds() } }
        func cpu() -> CPUSample {
            CPUSample(worker: cpuSeconds(), postgres: postmaster.map { ProcessCPU.treeSeconds(root: $0) } ?? 0,
                      harness: ProcessCPU.ownSeconds())
        }
        func peakRSS() -> Double { processes.map { $0.peakRSSMegabytes() }.max() ?? 0 }
        func verified() -> Int {
            guard let connection = try? PostgresConnection(connectionString: database, applicationName: "veridoc-bench") else { return -1 }
            defer { connection.close() }
            return Int((try? connection.execute("SELECT count(*) AS n FROM results WHERE verdict = 'verified'").int(0, "n")) ?? -1)
        }
    }

    private func session(workers: Int, threadsPerWorker: Int, requestPartitions: Int32? = nil, signatureMemo: Bool = true,
                         stage: ((String) throws -> Void)? = nil, _ body: (Environment) throws -> Run) throws -> Run {
        runNumber += 1
        let name = "bench_\(runNumber)_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try PostgresConnection(connectionString: postgres.connectionString, applicationName: "veridoc-bench")
        _ = try admin.execute("CREATE DATABASE \(name)")
        defer {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            admin.close()
        }
        let database = "host=127.0.0.1 port=\(postgres.port) user=postgres dbname=\(name)"

        let cluster = try MockCluster(brokers: 1)
        defer { cluster.close() }
        try cluster.createTopic("veridoc.requests", partitions: requestPartitions ?? partitions)
        try cluster.createTopic("veridoc.outcomes", partitions: requestPartitions ?? partitions)
        try cluster.createTopic("veridoc.requests.dlq", partitions: 1)

        if let stage {
            progress("run \(runNumber): staging the backlog …")
            try stage(cluster.bootstrapServers)
        }
        let folder = directory.appendingPathComponent("run-\(runNumber)")
        let config = try writeConfiguration(folder: folder, bootstrap: cluster.bootstrapServers, database: database, threads: threadsPerWorker,
                                            signatureMemoEntries: signatureMemo ? nil : 0)
        var processes: [WorkerProcess] = []
        defer { processes.forEach { $0.stop() } }
        let spawnedAt = Date()
        for index in 0..<workers {
            processes.append(try WorkerProcess(binary: binary, config: config.path, log: folder.appendingPathComponent("worker-\(index).log").path))
        }
        progress("run \(runNumber): \(workers) worker process(es) × \(threadsPerWorker) threads joining …")
        try waitForStableGroup(processes)

        let clock = LatencyClock()
        let reader = try OutcomeReader(bootstrap: cluster.bootstrapServers, clock: clock)
        reader.start()
        defer { reader.stop() }
        let readerDeadline = Date().addingTimeInterval(30)
        while !reader.isAssigned && Date() < readerDeadline { Thread.sleep(forTimeInterval: 0.05) }
        progress("run \(runNumber): running")
        return try body(Environment(bootstrap: cluster.bootstrapServers, reader: reader, clock: clock, processes: processes, database: database,
                                    spawnedAt: spawnedAt, postmaster: postgres.serverPID))
    }

    /// Every worker has had partitions assigned and no rebalance was logged for 2 s.
    private func waitForStableGroup(_ processes: [WorkerProcess]) throws {
        let deadline = Date().addingTimeInterval(90)
        var lastChange = Date()
        var lastSignature = ""
        while Date() < deadline {
            let logs = processes.map { $0.logText() }
            for (process, log) in zip(processes, logs) where !process.isRunning {
                throw Failure(description: "a worker process exited: \(log.suffix(800))")
            }
            let signature = logs.map { "\($0.components(separatedBy: "partitions assigned").count),\($0.components(separatedBy: "partitions revoked").count)" }.joined(separator: ";")
            if signature != lastSignature { lastSignature = signature; lastChange = Date() }
            let everyoneAssigned = logs.allSatisfy { $0.contains("partitions assigned") }
            if everyoneAssigned && Date().timeIntervalSince(lastChange) >= 2 { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw Failure(description: "the worker group did not settle within 90 s")
    }

    private func writeConfiguration(folder: URL, bootstrap: String, database: String, threads: Int, signatureMemoEntries: Int?) throws -> URL {
        let file = try factory.merchant.writeConfiguration(to: folder, trustAnchors: [factory.authority.iaca])
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        // The corpus is generated once, before every run: give it room to age.
        if var tenants = root["tenants"] as? [[String: Any]] {
            for index in tenants.indices { tenants[index]["maxRequestAgeSeconds"] = 3600 }
            root["tenants"] = tenants
        }
        root["kafka"] = ["bootstrapServers": bootstrap, "groupId": "veridoc-bench",
                         "properties": ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "5"]]
        root["postgres"] = ["connectionString": database]
        root["worker"] = ["threads": threads, "batchSize": 500].merging(signatureMemoEntries.map { ["signatureMemoEntries": $0] } ?? [:]) { $1 }
        root["replay"] = ["nonceKeyFile": "pki/nonce.key"]
        root["observability"] = ["port": 0, "logLevel": "info"]
        let keyPath = folder.appendingPathComponent("pki/nonce.key").path
        _ = FileManager.default.createFile(atPath: keyPath, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(),
                                           attributes: [.posixPermissions: 0o600])
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]).write(to: file)
        return file
    }

    final class Parts: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: [Result<[LoadGenerator.Record], any Error>]
        init(count: Int) { storage = Array(repeating: .success([]), count: count) }
        func set(_ index: Int, _ result: Result<[LoadGenerator.Record], any Error>) { lock.lock(); storage[index] = result; lock.unlock() }
        var results: [Result<[LoadGenerator.Record], any Error>] { lock.lock(); defer { lock.unlock() }; return storage }
    }
}

/// A `veridoc run` child process, its stderr in a file; read from /proc.
final class WorkerProcess: @unchecked Sendable {
    let pid: pid_t
    private let logPath: String
    private var exited = false {
        didSet { if exited, let interruption { Interruption.unregister(interruption) } }
    }
    private var interruption: Interruption.Token?

    init(binary: String, config: String, log: String) throws {
        logPath = log
        guard let pid = Spawn.start(binary, ["run", "--config", config], stdout: "/dev/null", stderr: log) else {
            throw EndToEndBench.Failure(description: "cannot start \(binary) run")
        }
        self.pid = pid
        // Interrupted, the bench exits at once: a worker left running would keep writing to a database about to go.
        interruption = Interruption.register { [pid] in
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    var isRunning: Bool {
        if exited { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    func logText() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// utime + stime of the process, seconds.
    func cpuSeconds() -> Double { ProcessCPU.seconds(pid: pid) }

    func peakRSSMegabytes() -> Double { Self.statusField("VmHWM", pid: pid) / 1024 }

    /// A kB field of /proc/PID/status (pid 0: this process).
    static func statusField(_ name: String, pid: pid_t) -> Double {
        let path = pid == 0 ? "/proc/self/status" : "/proc/\(pid)/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// SIGTERM (the worker drains and leaves the group), then waits up to 30 s, then SIGKILL.
    func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exited = true
        }
    }
}

extension EndToEndBench.Run {
    /// A run measured between two looks at its progress (time, events so far —
    /// outcomes read back, or events stored — and CPU): the events between
    /// them, their rate, and each party's CPU per event.
    init(workers: Int, threadsPerWorker: Int, between start: (Date, Int, CPUSample), and end: (Date, Int, CPUSample),
         peakRSSMegabytes: Double, verified: Int, produced: Int) {
        let seconds = end.0.timeIntervalSince(start.0)
        let counted = end.1 - start.1
        let used = end.2 - start.2
        let perEvent = 1000 / Double(max(counted, 1))
        self.init(workers: workers, threadsPerWorker: threadsPerWorker, events: counted, seconds: seconds,
                  eventsPerSecond: Double(counted) / max(seconds, 1e-6), peakRSSMegabytes: peakRSSMegabytes,
                  cpuMillisecondsPerEvent: used.worker * perEvent, postgresCPUMillisecondsPerEvent: used.postgres * perEvent,
                  harnessCPUMillisecondsPerEvent: used.harness * perEvent, verified: verified, produced: produced)
    }
}
