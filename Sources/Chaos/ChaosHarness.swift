import DemoKit
import Foundation
import Kafka
import Postgres
import TestIssuer
import Verification

/// Runs real `veridoc run` workers against a `veridoc dev-broker` process and a
/// PostgreSQL cluster of its own, injects faults on a seeded schedule while
/// events are produced, then stops the faults, lets the workers converge and
/// checks the invariants from the database and the topics.
public final class ChaosHarness: @unchecked Sendable {
    let options: ChaosOptions
    let log: @Sendable (String) -> Void
    let work: URL
    var random: TestIssuer.SeededRandom

    // Services.
    var postgres = ""                 // connection string (admin = the database the workers use)
    var postgresDirectory: URL { work.appendingPathComponent("pg") }
    var postmasterPIDs: Set<pid_t> = []
    var broker: ChildProcess!
    var bootstrap = ""
    var config: URL!

    // Workers, guarded by `lock`.
    let lock = NSLock()
    var workers: [ChildProcess] = []
    var allChildren: [ChildProcess] = []
    var workerSerial = 0
    var faultCounts: [FaultKind: Int] = [:]
    var examples: [String] = []
    var invariantCounts: [String: Int] = [:]

    // Events.
    struct Planned {
        let record: LoadGenerator.Record
        let expected: (verdict: String, reasons: [String])?
        /// Replays of one response share a group (the original event id).
        let nonceGroup: String?
    }
    var planned: [Planned] = []
    let delivery = DeliveryLedger()
    var snapshotsChecked = 0

    static let requestTopic = "veridoc.requests"
    static let outcomeTopic = "veridoc.outcomes"
    static let deadLetterTopic = "veridoc.requests.dlq"
    static let group = "veridoc"
    /// One Produce request in flight per broker connection, for every producer
    /// under test. librdkafka's mock broker (2.0.2) checks idempotent sequence
    /// numbers only for transactional producers, so when an injected error fails
    /// batch A while batch B (later sequence) is already in flight, the mock
    /// appends B, and librdkafka acknowledges A implicitly ("IMPLICITACK …
    /// implicitly acked by subsequent batch success"). That is right against
    /// Apache Kafka, which would have refused B with OUT_OF_ORDER_SEQUENCE_NUMBER
    /// unless A was stored, but against the mock A is lost with a success report:
    /// the chaos run's one flake (2 of 12 probe rounds lost records with five in
    /// flight, none with one). Production keeps librdkafka's default of 5.
    static let maxInFlight = "1"

    public init(options: ChaosOptions, log: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.log = log
        work = URL(fileURLWithPath: "/tmp/veridoc-chaos-\(UUID().uuidString.prefix(8).lowercased())")
        random = TestIssuer.SeededRandom(seed: options.seed &* 0x9E37_79B9_7F4A_7C15 &+ 17)
    }

    public func run() throws -> ChaosSummary {
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        chmod(work.path, 0o755)
        var summary = ChaosSummary()
        summary.seed = options.seed
        summary.durationSeconds = options.duration
        if options.keep { summary.workDirectory = work.path }
        defer { teardown() }

        try startPostgres()
        try startBroker()
        try prepareEvents()
        for _ in 0..<options.workers { try startWorker() }

        let stop = Flag()
        let producing = Thread { [self] in produce(stop: stop) }
        producing.name = "chaos-produce"
        producing.start()
        let sampling = Thread { [self] in sample(stop: stop) }
        sampling.name = "chaos-sample"
        sampling.start()

        injectFaults()
        log("faults done; waiting for convergence")
        restoreServices()
        let converged = waitForConvergence()
        summary.convergedAfterSeconds = converged
        stop.set()
        producing.cancel()
        Thread.sleep(forTimeInterval: 1.2)

        stopWorkers()
        try check(into: &summary)
        lock.lock()
        summary.faults = Dictionary(uniqueKeysWithValues: faultCounts.map { ($0.key.rawValue, $0.value) })
        summary.workersStarted = workerSerial
        lock.unlock()
        teardown()
        checkNoProcessLeft()
        summary.invariants = invariantCounts
        summary.examples = examples
        summary.positionSnapshotsChecked = snapshotsChecked
        if let output = options.output {
            try? FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
            try summary.json().write(to: output)
        }
        // A failed run keeps its folder (worker logs, PostgreSQL data) for the post-mortem.
        if summary.violations > 0 { summary.workDirectory = work.path }
        if summary.violations > 0, let output = options.output { try? summary.json().write(to: output) }
        if !options.keep && summary.violations == 0 { try? FileManager.default.removeItem(at: work) }
        return summary
    }

    func violation(_ invariant: String, _ example: String) {
        lock.lock()
        invariantCounts[invariant, default: 0] += 1
        if examples.filter({ $0.hasPrefix(invariant) }).count < 5 { examples.append("\(invariant): \(example)") }
        lock.unlock()
    }

    func declare(_ invariant: String) {
        lock.lock()
        if invariantCounts[invariant] == nil { invariantCounts[invariant] = 0 }
        lock.unlock()
    }

    // MARK: services

    private func startPostgres() throws {
        let script = options.repository.appendingPathComponent("scripts/test-postgres").path
        let logFile = work.appendingPathComponent("test-postgres.log").path
        let status = try runToCompletion("/bin/bash", [script, "start", postgresDirectory.path], log: logFile)
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        guard status == 0, let line = text.split(separator: "\n").first(where: { $0.contains("VERIDOC_TEST_POSTGRES=") }),
              let start = line.firstIndex(of: "'"), let end = line.lastIndex(of: "'"), start < end
        else { throw ChildProcess.Failure(description: "PostgreSQL did not start: \(text.suffix(800))") }
        postgres = String(line[line.index(after: start)..<end])
        rememberPostmaster()
        log("PostgreSQL: \(postgres)")
    }

    private func rememberPostmaster() {
        if let text = try? String(contentsOf: postgresDirectory.appendingPathComponent("data/postmaster.pid"), encoding: .utf8),
           let pid = text.split(separator: "\n").first.flatMap({ pid_t($0) }) {
            lock.lock()
            postmasterPIDs.insert(pid)
            lock.unlock()
        }
    }

    func postgresScript(_ command: String) -> Bool {
        let script = options.repository.appendingPathComponent("scripts/test-postgres").path
        let status = try? runToCompletion("/bin/bash", [script, command, postgresDirectory.path], log: work.appendingPathComponent("test-postgres.log").path)
        if command == "resume" { rememberPostmaster() }
        return status == 0
    }

    private func startBroker() throws {
        broker = try ChildProcess(
            options.binary.path,
            ["dev-broker", "--brokers", "3", "--parent-pid", "\(getpid())",
             "--topic", "\(Self.requestTopic):6", "--topic", "\(Self.outcomeTopic):6", "--topic", "\(Self.deadLetterTopic):6"],
            name: "dev-broker", output: work.appendingPathComponent("broker.log").path, controlPipes: true)
        lock.lock()
        allChildren.append(broker)
        lock.unlock()
        guard let line = broker.readLine(timeout: 30), line.hasPrefix("BOOTSTRAP=") else {
            throw ChildProcess.Failure(description: "dev-broker printed no BOOTSTRAP line")
        }
        bootstrap = String(line.dropFirst("BOOTSTRAP=".count))
        log("broker: \(bootstrap)")
    }

    /// One control command; the answer line (OK / ERR …).
    @discardableResult
    func brokerCommand(_ command: String) -> String {
        broker.writeLine(command)
        return broker.readLine(timeout: 10) ?? "(no answer)"
    }

    // MARK: events and config

    private func prepareEvents() throws {
        var factory = try TestIssuer.EventFactory(now: Date(), seed: options.seed)
        // Fresh event times and a day of allowed age: request.expired cannot flip
        // between the reference verification and the worker's.
        factory.merchant.maxRequestAgeSeconds = 86_400
        let configDirectory = work.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        let file = try factory.merchant.writeConfiguration(to: configDirectory, trustAnchors: [factory.authority.iaca])
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        root["kafka"] = [
            "bootstrapServers": bootstrap, "groupId": Self.group,
            "properties": [
                "session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "5",
                "max.in.flight.requests.per.connection": Self.maxInFlight,
            ],
        ]
        root["postgres"] = ["connectionString": postgres]
        root["worker"] = ["threads": 2, "batchSize": 50, "batchLingerMilliseconds": 20, "drainTimeoutSeconds": 10, "outboxClaimSeconds": 3]
        root["replay"] = ["nonceKeyFile": "nonce.key"]
        root["observability"] = ["port": 0, "logLevel": "info"]
        let nonceKey = configDirectory.appendingPathComponent("nonce.key")
        _ = FileManager.default.createFile(atPath: nonceKey.path, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(),
                                       attributes: [.posixPermissions: 0o600])
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: file)
        config = file

        let verifier = try factory.verifier()
        let mix = LoadGenerator.Mix(weights: [
            (.valid, 70), (.expired, 4), (.stale, 3), (.tampered, 5), (.wrongKey, 3), (.untrusted, 3),
            (.malformed, 4), (.replayed, 4), (.redelivered, 3), (.poison, 1),
        ])
        var generator = LoadGenerator(factory: factory, mix: mix, seed: options.seed &+ 1)
        log("generating \(options.eventCount) records and their reference verdicts")
        for _ in 0..<options.eventCount {
            let record = try generator.next()
            var expected: (String, [String])?
            if record.id != nil {
                let result = verifier.verify(eventJSON: record.value, at: Date())
                expected = (result.verdict, result.report.reasons.map(\.code.rawValue))
            }
            var group: String? = record.id
            if record.kind == .replayed, let id = record.id {
                let parts = id.split(separator: "-", maxSplits: 2)
                if parts.count == 3 { group = String(parts[2]) }
            }
            planned.append(Planned(record: record, expected: expected, nonceGroup: group))
        }
    }

    // MARK: workers

    func startWorker() throws {
        lock.lock()
        workerSerial += 1
        let serial = workerSerial
        lock.unlock()
        let worker = try ChildProcess(options.binary.path, ["run", "--config", config.path], name: "worker-\(serial)",
                                      output: work.appendingPathComponent("worker-\(serial).log").path)
        lock.lock()
        workers.append(worker)
        allChildren.append(worker)
        lock.unlock()
    }

    /// SIGTERM: the worker drains and must exit 0.
    func terminate(_ worker: ChildProcess, timeout: TimeInterval = 40) {
        worker.signal(SIGTERM)
        if !worker.wait(timeout: timeout) {
            // Where it hangs: the threads' kernel wait channels and the log's last lines.
            let channels = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker.pid)/task")) ?? []).compactMap { task in
                try? String(contentsOfFile: "/proc/\(worker.pid)/task/\(task)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let tail = ((try? String(contentsOf: work.appendingPathComponent("\(worker.name).log"), encoding: .utf8)) ?? "")
                .split(separator: "\n").suffix(3).joined(separator: " | ")
            violation("workerDrainExit", "\(worker.name) did not exit within \(Int(timeout)) s of SIGTERM (threads: \(channels.joined(separator: ","))); log: \(tail)")
            worker.signal(SIGABRT)  // the Swift runtime prints every thread's backtrace into the worker's log
            if !worker.wait(timeout: 10) { worker.killNow() }
        } else if worker.exitStatus != 0 {
            violation("workerDrainExit", "\(worker.name) exited with \(worker.exitStatus.map { "status \($0)" } ?? "signal \(worker.exitSignal ?? 0)") after SIGTERM")
        }
    }

    func removeWorker(at index: Int) -> ChildProcess {
        lock.lock()
        defer { lock.unlock() }
        return workers.remove(at: index)
    }

    var workerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return workers.count
    }

    private func stopWorkers() {
        lock.lock()
        let running = workers
        workers.removeAll()
        lock.unlock()
        declare("workerDrainExit")
        let group = DispatchGroup()
        for worker in running {
            DispatchQueue.global().async(group: group) { [self] in terminate(worker) }
        }
        group.wait()
    }

    // MARK: producing

    private func produce(stop: Flag) {
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(properties: [
                "bootstrap.servers": bootstrap, "linger.ms": "5", "message.timeout.ms": "60000", "log_level": "2",
                "max.in.flight.requests.per.connection": Self.maxInFlight,
            ], onDelivery: { [delivery] report in delivery.report(report) }, onError: { _ in
                // Broker-down connection errors are expected here; delivery reports tell what matters.
            })
        } catch {
            violation("producer", "cannot create the producer: \(error)")
            return
        }
        let window = max(1, options.duration * 0.7)
        let interval = window / Double(max(planned.count, 1))
        let started = Date()
        var next = 0
        while !stop.isSet {
            // Failed deliveries are sent again (same bytes, same id): duplicates are the worker's job.
            var batch = delivery.takeRetries()
            if next < planned.count && Date().timeIntervalSince(started) >= Double(next) * interval {
                batch.append(next)
                next += 1
            }
            for index in batch {
                let record = planned[index].record
                delivery.sent(index)
                var attempts = 0
                while !stop.isSet {
                    do {
                        try producer.send(topic: Self.requestTopic, key: record.key, value: record.value, token: UInt64(index))
                        break
                    } catch {
                        attempts += 1
                        if attempts > 6000 { break }
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                }
            }
            if batch.isEmpty { Thread.sleep(forTimeInterval: min(0.01, interval)) }
        }
        producer.close(flushTimeoutMilliseconds: 5_000)
    }

    var productionComplete: Bool { delivery.deliveredCount(of: planned.count) == planned.count }

    // MARK: convergence

    private func restoreServices() {
        for broker in 1...3 { brokerCommand("up \(broker)") }
        _ = postgresScript("resume")
        lock.lock()
        let count = workers.count
        lock.unlock()
        if count == 0 { try? startWorker() }
    }

    /// Seconds after the faults until every event is stored, every position at
    /// the end of its partition and the outbox empty; nil if that never happened.
    private func waitForConvergence() -> Double? {
        let started = Date()
        let deadline = started.addingTimeInterval(options.convergeTimeout + options.duration * 0.3)
        while Date() < deadline {
            if productionComplete, let state = try? databaseState(), state.converged(with: delivery.highWatermarks(), ids: distinctIDs()) {
                return Date().timeIntervalSince(started)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let state = try? databaseState()
        log("not converged: delivered \(delivery.deliveredCount(of: planned.count))/\(planned.count), results \(state?.results ?? -1)/\(distinctIDs().count), unpublished \(state?.unpublished ?? -1)")
        return nil
    }

    func distinctIDs() -> Set<String> {
        Set(planned.indices.filter { delivery.wasDelivered($0) }.compactMap { planned[$0].record.id })
    }

    struct DatabaseState {
        var results = 0
        var resultIDs: Set<String> = []
        var unpublished = 0
        var positions: [Int32: Int64] = [:]

        func converged(with highWatermarks: [Int32: Int64], ids: Set<String>) -> Bool {
            guard unpublished == 0, ids.isSubset(of: resultIDs) else { return false }
            return highWatermarks.allSatisfy { positions[$0.key] == $0.value }
        }
    }

    func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: postgres, applicationName: "veridoc-chaos")
    }

    func databaseState() throws -> DatabaseState {
        let connection = try connect()
        defer { connection.close() }
        var state = DatabaseState()
        let rows = try connection.execute("SELECT event_id FROM results")
        state.results = rows.rowCount
        state.resultIDs = Set((0..<rows.rowCount).compactMap { rows.string($0, "event_id") })
        state.unpublished = Int(try connection.execute("SELECT count(*) AS count FROM outbox WHERE published_at IS NULL").int(0, "count") ?? -1)
        let positions = try connection.execute("SELECT partition, next_offset FROM consumer_positions WHERE consumer_group = $1 AND topic = $2",
                                               [.text(Self.group), .text(Self.requestTopic)])
        for row in 0..<positions.rowCount {
            if let partition = positions.int(row, "partition"), let offset = positions.int(row, "next_offset") { state.positions[Int32(partition)] = offset }
        }
        return state
    }

    // MARK: teardown

    private var tornDown = false

    func teardown() {
        lock.lock()
        if tornDown { lock.unlock(); return }
        tornDown = true
        let children = allChildren
        lock.unlock()
        for child in children where child !== broker && child.isRunning { child.killNow() }
        if let broker, broker.isRunning {
            broker.signal(SIGTERM)
            if !broker.wait(timeout: 10) { broker.killNow() }
        }
        _ = postgresScript("stop")
    }

    private func checkNoProcessLeft() {
        declare("processesLeft")
        lock.lock()
        let children = allChildren
        let postmasters = postmasterPIDs
        lock.unlock()
        for child in children where child.isRunning || ChildProcess.exists(child.pid, commandContaining: "veridoc") {
            violation("processesLeft", "\(child.name) (pid \(child.pid)) still running")
        }
        for pid in postmasters where ChildProcess.exists(pid, commandContaining: postgresDirectory.path) {
            violation("processesLeft", "postmaster pid \(pid) still running")
        }
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// Which planned records are delivered, where (partition, offset), and which must be sent again.
final class DeliveryLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var delivered: [Int: (partition: Int32, offset: Int64)] = [:]
    private var offsets: [Int32: [Int64: Int]] = [:]   // partition → offset → planned index
    private var retries: [Int] = []
    private var pending: Set<Int> = []

    func sent(_ index: Int) { lock.lock(); pending.insert(index); lock.unlock() }

    func report(_ report: KafkaProducer.DeliveryReport) {
        let index = Int(report.token)
        lock.lock()
        defer { lock.unlock() }
        pending.remove(index)
        if report.error == nil, let partition = report.topicPartition?.partition, let offset = report.offset {
            if delivered[index] == nil { delivered[index] = (partition, offset) }
            offsets[partition, default: [:]][offset] = index
        } else if delivered[index] == nil {
            retries.append(index)
        }
    }

    func takeRetries() -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        let taken = retries
        retries.removeAll()
        return taken
    }

    func wasDelivered(_ index: Int) -> Bool { lock.lock(); defer { lock.unlock() }; return delivered[index] != nil }

    func deliveredCount(of total: Int) -> Int { lock.lock(); defer { lock.unlock() }; return delivered.count }

    /// Per partition: 1 + the highest offset a delivery report named.
    func highWatermarks() -> [Int32: Int64] {
        lock.lock()
        defer { lock.unlock() }
        return offsets.mapValues { ($0.keys.max() ?? -1) + 1 }
    }

    /// partition → offset → planned index, as far as delivery reports tell.
    func offsetMap() -> [Int32: [Int64: Int]] { lock.lock(); defer { lock.unlock() }; return offsets }
}
