import DemoKit
import Foundation
import Kafka
import Postgres
import TestIssuer
import Verification

/// Runs real `veridoc run` workers against a `veridoc-dev dev-broker` process and a
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
    /// The broker process and its addresses; replaced when it dies (guarded by `brokerLock`).
    var broker: ChaosBroker!
    var bootstrap = ""
    let brokerLock = NSLock()
    var config: URL!
    /// Every process started, for the SIGINT/SIGTERM cleanup (`Interruption`).
    let roster = ProcessRoster()
    var interruptionToken: Interruption.Token?

    // Workers, guarded by `lock`.
    let lock = NSLock()
    var workers: [ChildProcess] = []
    var allChildren: [ChildProcess] = []
    var workerSerial = 0
    var faultCounts: [FaultKind: Int] = [:]
    var examples: [String] = []
    var invariantCounts: [String: Int] = [:]
    var incidents: [String] = []
    var brokerRestarts = 0
    var postgresRestarts = 0
    /// When the broker was last restarted (its topics lost with it).
    var lastBrokerRestart: Date?
    /// Set while a postgres fault has the server down on purpose.
    var postgresFaultActive = false
    /// Set while a brokerRestart fault replaces the broker on purpose.
    var brokerFaultActive = false
    /// Stored positions from the sampler's last snapshot, for the producer's backlog bound.
    var latestPositions: [Int32: Int64] = [:]
    /// Origins ("partition/offset") of the dead letters read while the run
    /// goes on, for the current broker (DeadLetterWatch.swift).
    var deadLetterOrigins: Set<String> = []
    let watchStop = Flag()

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
    /// under test. librdkafka's mock broker checks idempotent sequence numbers
    /// only for transactional producers, so when an injected error fails batch
    /// A while batch B (later sequence) is already in flight, the mock appends
    /// B, and librdkafka acknowledges A implicitly ("IMPLICITACK … implicitly
    /// acked by subsequent batch success"). That is right against Apache Kafka,
    /// which would refuse B with OUT_OF_ORDER_SEQUENCE_NUMBER unless A was
    /// stored, but against the mock A is lost with a success report. With one
    /// request in flight there is no B. Production keeps librdkafka's default of 5.
    static let maxInFlight = "1"
    /// tansu joins a group in about half of session.timeout.ms (infra.md), and
    /// a rebalance waits for a member that was killed until the rebalance
    /// timeout, which librdkafka takes from max.poll.interval.ms (default
    /// 300 s), so workers would wait minutes for an assignment after a kill.
    static let tansuGroupProperties = ["session.timeout.ms": "2000", "max.poll.interval.ms": "15000"]

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
        // A broker that dies under a control command must not take the
        // harness with it: write(2) then fails with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
        // A worker that crashes leaves a core dump in its folder (core_pattern
        // permitting), for the violation to name.
        var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
        if setrlimit(Int32(RLIMIT_CORE.rawValue), &unlimited) != 0 {
            var current = rlimit()
            getrlimit(Int32(RLIMIT_CORE.rawValue), &current)
            unlimited.rlim_cur = current.rlim_max
            setrlimit(Int32(RLIMIT_CORE.rawValue), &unlimited)
        }
        interruptionToken = Interruption.register { [roster, postgresDirectory, repository = options.repository] in
            roster.stopAll(postgresScript: repository.appendingPathComponent("scripts/test-postgres").path, postgresDirectory: postgresDirectory.path)
        }
        defer { teardown() }

        log("work directory: \(work.path)")
        try startPostgres()
        try startBroker()
        try prepareEvents()
        for _ in 0..<options.workers { try startWorker() }
        let watching = Thread { [self] in watch(stop: watchStop) }
        watching.name = "chaos-watch"
        watching.start()

        let stop = Flag()
        let producing = Thread { [self] in produce(stop: stop) }
        producing.name = "chaos-produce"
        producing.start()
        let sampling = Thread { [self] in sample(stop: stop) }
        sampling.name = "chaos-sample"
        sampling.start()
        let deadLetterStop = Flag()
        let deadLetters = Thread { [self] in watchDeadLetters(stop: deadLetterStop) }
        deadLetters.name = "chaos-dead-letters"
        deadLetters.start()

        injectFaults()
        log("faults done; waiting for convergence")
        restoreServices()
        let converged = waitForConvergence()
        summary.convergedAfterSeconds = converged
        stop.set()
        producing.cancel()
        Thread.sleep(forTimeInterval: 1.2)

        stopWatching()
        stopWorkers()
        deadLetterStop.set()
        Thread.sleep(forTimeInterval: 0.5)
        try check(into: &summary)
        lock.lock()
        summary.faults = Dictionary(uniqueKeysWithValues: faultCounts.map { ($0.key.rawValue, $0.value) })
        summary.workersStarted = workerSerial
        summary.incidents = incidents
        summary.brokerRestarts = brokerRestarts
        summary.postgresRestarts = postgresRestarts
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

    func startBroker() throws {
        let topics = [Self.requestTopic, Self.outcomeTopic, Self.deadLetterTopic]
        let started: ChaosBroker
        switch options.broker {
        case .mock:
            let mock = try MockChaosBroker(binary: options.tooling.path, topics: topics, log: work.appendingPathComponent("broker.log").path)
            remember(mock.process)
            started = mock
        case .tansu:
            guard let binary = TansuServer.locate(repository: options.repository) else {
                throw ChildProcess.Failure(description: "no tansu binary: run `make setup-tansu` or set VERIDOC_TANSU")
            }
            started = try TansuChaosBroker(binary: binary, topics: topics, log: work.appendingPathComponent("broker.log"))
            if !roster.add(started.pid) { started.stop() }
        }
        brokerLock.lock()
        broker = started
        bootstrap = started.bootstrap
        brokerLock.unlock()
        log("broker: \(options.broker.rawValue) at \(currentBootstrap) (pid \(started.pid))")
    }

    var currentBootstrap: String {
        brokerLock.lock()
        defer { brokerLock.unlock() }
        return bootstrap
    }

    /// Every child goes on both lists: `allChildren` for teardown and the
    /// checks, the roster for an interruption.
    func remember(_ child: ChildProcess) {
        lock.lock()
        allChildren.append(child)
        lock.unlock()
        if !roster.add(child.pid) { child.killNow() }
    }

    /// One control command; the answer line (OK / ERR …).
    @discardableResult
    func brokerCommand(_ command: String) -> String {
        brokerLock.lock()
        defer { brokerLock.unlock() }
        return broker.command(command) ?? "(no control channel)"
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
            "bootstrapServers": currentBootstrap, "groupId": Self.group,
            "properties": [
                "session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "5",
                "max.in.flight.requests.per.connection": Self.maxInFlight,
            ].merging(options.broker == .tansu ? Self.tansuGroupProperties : [:]) { $1 },
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
        guard !roster.isStopping else { return }
        lock.lock()
        workerSerial += 1
        let serial = workerSerial
        lock.unlock()
        let worker = try ChildProcess(options.worker.path, ["run", "--config", config.path], name: "worker-\(serial)",
                                      output: work.appendingPathComponent("worker-\(serial).log").path)
        lock.lock()
        workers.append(worker)
        lock.unlock()
        remember(worker)
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

    private func makeProducer() -> KafkaProducer? {
        do {
            return try KafkaProducer(properties: [
                "bootstrap.servers": currentBootstrap, "linger.ms": "5", "message.timeout.ms": "60000", "log_level": "2",
                "max.in.flight.requests.per.connection": Self.maxInFlight,
            ], onDelivery: { [delivery] report in delivery.report(report) }, onError: { _ in
                // Broker-down connection errors are expected here; delivery reports tell what matters.
            })
        } catch {
            violation("producer", "cannot create the producer: \(error)")
            return nil
        }
    }

    /// Bytes a partition may hold beyond its stored position before the
    /// producer waits. The mock broker keeps about 5 MB a partition and deletes
    /// older records: a producer that outruns the workers by more makes the
    /// broker lose records, and the run would measure the broker's retention,
    /// not the workers.
    static let backlogBytesPerPartition = 3 << 20

    private func produce(stop: Flag) {
        guard var producer = makeProducer() else { return }
        var epoch = delivery.epoch
        let window = max(1, options.duration * 0.7)
        let interval = window / Double(max(planned.count, 1))
        let started = Date()
        var next = 0
        var resend: [Int] = []
        var backlogCheckedAt = Date.distantPast
        var backlogIsFull = false
        while !stop.isSet {
            if delivery.epoch != epoch {
                // The broker was replaced, empty: everything produced so far is sent
                // to the new one (already stored events come back as duplicates).
                producer.close(flushTimeoutMilliseconds: 0)
                guard let fresh = makeProducer() else { return }
                producer = fresh
                epoch = delivery.epoch
                resend = Array(0..<next)
            }
            // Computed at most every 100 ms (it walks every delivery of the epoch),
            // and before every batch of a resend, which sends 200 records at once.
            if !resend.isEmpty || Date().timeIntervalSince(backlogCheckedAt) > 0.1 {
                backlogCheckedAt = Date()
                backlogIsFull = backlogFull()
            }
            if backlogIsFull {
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            // Failed deliveries are sent again (same bytes, same id): duplicates are the worker's job.
            var batch = delivery.takeRetries()
            if !resend.isEmpty {
                batch += resend.prefix(200)
                resend.removeFirst(min(200, resend.count))
            } else if next < planned.count && Date().timeIntervalSince(started) >= Double(next) * interval {
                batch.append(next)
                next += 1
            }
            for index in batch {
                let record = planned[index].record
                let token = delivery.sent(index)
                var attempts = 0
                while !stop.isSet {
                    do {
                        try producer.send(topic: Self.requestTopic, key: record.key, value: record.value, token: token)
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

    /// Whether some partition may hold `backlogBytesPerPartition` past its
    /// stored position: what was delivered there, and, since any partition may
    /// get them, everything sent and not yet reported. (Counting only reported
    /// deliveries let a resend after a broker restart push thousands of records
    /// between two checks, and the mock deleted them before they were read.)
    private func backlogFull() -> Bool {
        lock.lock()
        let positions = latestPositions
        lock.unlock()
        let size = { (index: Int) in self.planned[index].record.value.count }
        let pending = delivery.pendingBytes(size: size)
        let backlog = delivery.backlogBytes(beyond: positions, size: size)
        return (backlog.values.max() ?? 0) + pending > Self.backlogBytesPerPartition
    }

    var productionComplete: Bool { delivery.deliveredCount(of: planned.count) == planned.count }

    // MARK: convergence

    private func restoreServices() {
        if options.broker == .mock {
            for id in 1...3 { brokerCommand("up \(id)") }
        }
        brokerLock.lock()
        broker.resume()
        brokerLock.unlock()
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
            if productionComplete, let state = try? databaseState(),
               state.converged(with: delivery.highWatermarks(), ids: distinctIDs().subtracting(idsLostInGaps(state.resultIDs))) {
                return Date().timeIntervalSince(started)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let state = try? databaseState()
        log("not converged: delivered \(delivery.deliveredCount(of: planned.count))/\(planned.count), results \(state?.results ?? -1)/\(distinctIDs().count), unpublished \(state?.unpublished ?? -1)")
        return nil
    }

    /// Event ids without a result whose record lies in a gap the workers
    /// recorded against the current broker: the broker deleted it unread, and
    /// the workers said so (the invariants count these apart).
    func idsLostInGaps(_ stored: Set<String>) -> Set<String> {
        guard let connection = try? connect() else { return [] }
        defer { connection.close() }
        guard let gaps = try? offsetGaps(connection), !gaps.isEmpty else { return [] }
        var lost = Set<String>()
        for index in planned.indices {
            guard let id = planned[index].record.id, !stored.contains(id), let place = delivery.place(of: index),
                  gaps.contains(where: { $0.contains(place) }) else { continue }
            lost.insert(id)
        }
        return lost
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

    /// A connection for the harness's own reads; a server stopped by a fault
    /// makes it fail in seconds instead of waiting.
    func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: postgres + " connect_timeout=5", applicationName: "veridoc-chaos")
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
        watchStop.set()
        brokerLock.lock()
        let broker = self.broker
        brokerLock.unlock()
        let brokerProcess = (broker as? MockChaosBroker)?.process
        for child in children where child !== brokerProcess && child.isRunning { child.killNow() }
        broker?.stop()
        _ = postgresScript("stop")
        if let interruptionToken { Interruption.unregister(interruptionToken) }
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

/// Which planned records are delivered, where (partition, offset), and which
/// must be sent again, for the broker of the current epoch: a broker that is
/// replaced starts a new epoch, and reports from the old one are ignored.
final class DeliveryLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var currentEpoch: UInt64 = 0
    private var currentEpochStarted = Date()
    private var delivered: [Int: (partition: Int32, offset: Int64)] = [:]
    private var offsets: [Int32: [Int64: Int]] = [:]   // partition → offset → planned index
    private var retries: [Int] = []
    private var pending: Set<Int> = []

    var epoch: UInt64 { lock.lock(); defer { lock.unlock() }; return currentEpoch }
    /// When the current broker took over: gaps the workers recorded before
    /// then are in an older broker's offsets.
    var epochStarted: Date { lock.lock(); defer { lock.unlock() }; return currentEpochStarted }

    /// Forgets every delivery: the broker that had them is gone.
    func newEpoch() {
        lock.lock()
        currentEpoch += 1
        currentEpochStarted = Date()
        delivered.removeAll()
        offsets.removeAll()
        retries.removeAll()
        pending.removeAll()
        lock.unlock()
    }

    /// Marks `index` in flight; the token its delivery report must carry.
    func sent(_ index: Int) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        pending.insert(index)
        return currentEpoch << 32 | UInt64(index)
    }

    func report(_ report: KafkaProducer.DeliveryReport) {
        let index = Int(report.token & 0xFFFF_FFFF)
        lock.lock()
        defer { lock.unlock() }
        guard report.token >> 32 == currentEpoch else { return }
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

    /// Where `index` was delivered in this epoch.
    func place(of index: Int) -> (partition: Int32, offset: Int64)? { lock.lock(); defer { lock.unlock() }; return delivered[index] }

    func deliveredCount(of total: Int) -> Int { lock.lock(); defer { lock.unlock() }; return delivered.count }

    /// Per partition: 1 + the highest offset a delivery report named.
    func highWatermarks() -> [Int32: Int64] {
        lock.lock()
        defer { lock.unlock() }
        return offsets.mapValues { ($0.keys.max() ?? -1) + 1 }
    }

    /// partition → offset → planned index, as far as delivery reports tell.
    func offsetMap() -> [Int32: [Int64: Int]] { lock.lock(); defer { lock.unlock() }; return offsets }

    /// The bytes sent and not yet reported: their partition is not known yet.
    func pendingBytes(size: (Int) -> Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return pending.reduce(0) { $0 + size($1) }
    }

    /// Per partition, the bytes delivered at or past its position.
    func backlogBytes(beyond positions: [Int32: Int64], size: (Int) -> Int) -> [Int32: Int] {
        lock.lock()
        defer { lock.unlock() }
        var backlog: [Int32: Int] = [:]
        for (partition, byOffset) in offsets {
            let position = positions[partition] ?? 0
            backlog[partition] = byOffset.reduce(0) { $0 + ($1.key >= position ? size($1.value) : 0) }
        }
        return backlog
    }
}
