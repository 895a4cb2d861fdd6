import DemoKit
import Foundation
import Postgres
import Synchronization

/// The pids a harness started, for the cleanup that runs when SIGINT or
/// SIGTERM ends the process (`Interruption`): `defer` and the harness's own
/// teardown do not run then.
final class ProcessRoster: Sendable {
    private let state = Mutex<(pids: [pid_t], stopping: Bool)>(([], false))

    /// False once `stopAll` has begun: the caller must end the child itself
    /// (the watchdog may be replacing a worker the cleanup just killed).
    @discardableResult
    func add(_ pid: pid_t) -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.pids.append(pid)
            return true
        }
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// SIGKILL every child (workers first: they were started last), then the PostgreSQL cluster.
    func stopAll(postgresScript: String, postgresDirectory: String) {
        let pids = state.withLock { state in
            state.stopping = true
            return state.pids
        }
        for pid in pids.reversed() { kill(pid, SIGKILL) }
        // Twice: a watchdog turn already past its `isStopping` check when
        // this began may restart the cluster the first stop ended.
        for pass in 0..<2 {
            if pass > 0 { Thread.sleep(forTimeInterval: 0.6) }
            if let child = try? ChildProcess("/bin/bash", [postgresScript, "stop", postgresDirectory], name: "test-postgres", output: "/dev/null") {
                child.wait(timeout: 60)
            }
        }
    }
}

/// The run's processes: a PostgreSQL cluster of its own, the broker, the
/// worker processes. Starts, stops and restarts them, when a fault asks or
/// when one ends unasked (the watchdog: an incident, or for a worker a
/// violation), keeps the roster an interruption's cleanup stops, and tells
/// what it did for the summary.
final class Supervisor: @unchecked Sendable {
    private let options: ChaosOptions
    private let log: @Sendable (String) -> Void
    private let work: URL
    /// The workers' configuration; its Kafka and PostgreSQL sections follow the services.
    private let config: URL
    private let invariants: InvariantLedger
    /// Told when the broker is replaced: its deliveries are lost with it.
    private let delivery: DeliveryLedger
    private let postgresDirectory: URL

    /// The broker process and its addresses; replaced when it dies.
    private let brokerLock = NSLock()
    private var broker: ChaosBroker?
    private var bootstrap = ""
    /// Every process started, for the SIGINT/SIGTERM cleanup (`Interruption`).
    private let roster: ProcessRoster
    /// The tenant's webhook endpoint and its receiver.
    let webhooks: ChaosWebhooks
    private var interruptionToken: Interruption.Token?
    private let watchStop = Flag()

    // Guarded by `lock`.
    private let lock = NSLock()
    private var postgres = ""                 // connection string (admin = the database the workers use)
    private var postmasterPIDs: Set<pid_t> = []
    private var workers: [ChildProcess] = []
    private var allChildren: [ChildProcess] = []
    private var workerSerial = 0
    private var incidents: [String] = []
    private var brokerRestarts = 0
    private var postgresRestarts = 0
    /// When the broker was last restarted (its topics lost with it).
    private var lastRestart: Date?
    /// Set while a postgres fault has the server down on purpose.
    private var postgresFaultActive = false
    /// Set while a brokerRestart fault replaces the broker on purpose.
    private var brokerFaultActive = false
    private var tornDown = false

    init(options: ChaosOptions, work: URL, config: URL, invariants: InvariantLedger, delivery: DeliveryLedger, log: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.work = work
        postgresDirectory = work.appendingPathComponent("pg")
        self.config = config
        self.invariants = invariants
        self.delivery = delivery
        self.log = log
        let roster = ProcessRoster()
        self.roster = roster
        webhooks = ChaosWebhooks(options: options, work: work, config: config, log: log) { child in
            if !roster.add(child.pid) { child.killNow() }
        }
    }

    /// From here on, SIGINT or SIGTERM stops every process started.
    func registerInterruption() {
        let token = Interruption.register { [roster, postgresDirectory, repository = options.repository] in
            roster.stopAll(postgresScript: repository.appendingPathComponent("scripts/test-postgres").path, postgresDirectory: postgresDirectory.path)
        }
        lock.lock()
        interruptionToken = token
        lock.unlock()
    }

    /// When the broker was last restarted (its topics lost with it).
    var lastBrokerRestart: Date? { lock.lock(); defer { lock.unlock() }; return lastRestart }

    /// What the services did, for the summary.
    func report(into summary: inout ChaosSummary) {
        lock.lock()
        summary.workersStarted = workerSerial
        summary.incidents = incidents
        summary.brokerRestarts = brokerRestarts
        summary.postgresRestarts = postgresRestarts
        lock.unlock()
    }

    // MARK: services

    func startPostgres() throws {
        let script = options.repository.appendingPathComponent("scripts/test-postgres").path
        let logFile = work.appendingPathComponent("test-postgres.log").path
        let status = try runToCompletion("/bin/bash", [script, "start", postgresDirectory.path], log: logFile)
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        guard status == 0, let line = text.split(separator: "\n").first(where: { $0.contains("VERIDOC_TEST_POSTGRES=") }),
              let start = line.firstIndex(of: "'"), let end = line.lastIndex(of: "'"), start < end
        else { throw ChildProcess.Failure(description: "PostgreSQL did not start: \(text.suffix(800))") }
        let connectionString = String(line[line.index(after: start)..<end])
        lock.lock()
        postgres = connectionString
        lock.unlock()
        rememberPostmaster()
        log("PostgreSQL: \(connectionString)")
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
        let topics = [ChaosKafka.requestTopic, ChaosKafka.outcomeTopic, ChaosKafka.deadLetterTopic]
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

    var currentBootstrap: String { brokerLock.lock(); defer { brokerLock.unlock() }; return bootstrap }

    /// Every child goes on both lists: `allChildren` for teardown and the
    /// checks, the roster for an interruption.
    private func remember(_ child: ChildProcess) {
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
        return broker?.command(command) ?? "(no control channel)"
    }

    /// Adds the services' addresses and the workers' settings to the
    /// configuration, and the nonce key beside it.
    func completeConfiguration() throws {
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as! [String: Any]
        root["kafka"] = [
            "bootstrapServers": currentBootstrap, "groupId": ChaosKafka.group,
            "properties": [
                "session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "5",
                "max.in.flight.requests.per.connection": ChaosKafka.maxInFlight,
            ].merging(options.broker == .tansu ? ChaosKafka.tansuGroupProperties : [:]) { $1 },
        ]
        root["postgres"] = ["connectionString": postgresConnectionString]
        root["worker"] = ["threads": 2, "batchSize": 50, "batchLingerMilliseconds": 20, "drainTimeoutSeconds": 10, "outboxClaimSeconds": 3]
        root["replay"] = ["nonceKeyFile": "nonce.key"]
        root["observability"] = ["port": 0, "logLevel": "info"]
        try webhooks.configure(&root)
        let nonceKey = config.deletingLastPathComponent().appendingPathComponent("nonce.key")
        _ = FileManager.default.createFile(atPath: nonceKey.path, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(),
                                       attributes: [.posixPermissions: 0o600])
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: config)
    }

    /// The broker fault of its kind: SIGKILL and a new broker, not an incident.
    func replaceBroker() {
        setBrokerFault(true)
        defer { setBrokerFault(false) }
        withBroker { broker in
            kill(broker.pid, SIGKILL)
            _ = waitUntilEnded(broker)
        }
        restartBroker(asked: true)
    }

    func pauseBroker() { withBroker { $0.pause() } }
    func resumeBroker() { withBroker { $0.resume() } }

    private func withBroker(_ body: (ChaosBroker) -> Void) {
        brokerLock.lock()
        defer { brokerLock.unlock() }
        if let broker { body(broker) }
    }

    private func waitUntilEnded(_ broker: ChaosBroker) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while broker.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return !broker.isRunning
    }

    private func setBrokerFault(_ active: Bool) {
        lock.lock()
        brokerFaultActive = active
        lock.unlock()
    }

    /// Runs `body` (a PostgreSQL fault) with the watchdog told the server is down on purpose.
    func duringPostgresFault(_ body: () -> Bool) -> Bool {
        lock.lock()
        postgresFaultActive = true
        lock.unlock()
        defer {
            lock.lock()
            postgresFaultActive = false
            lock.unlock()
        }
        return body()
    }

    private var postgresConnectionString: String { lock.lock(); defer { lock.unlock() }; return postgres }

    /// A connection for the harness's own reads; a server stopped by a fault
    /// makes it fail in seconds instead of waiting.
    func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: postgresConnectionString + " connect_timeout=5", applicationName: "veridoc-chaos")
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
            invariants.violation("workerDrainExit", "\(worker.name) did not exit within \(Int(timeout)) s of SIGTERM (threads: \(channels.joined(separator: ","))); log: \(tail)")
            worker.signal(SIGABRT)  // the Swift runtime prints every thread's backtrace into the worker's log
            if !worker.wait(timeout: 10) { worker.killNow() }
        } else if worker.exitStatus != 0 {
            invariants.violation("workerDrainExit", "\(worker.name) exited with \(worker.exitStatus.map { "status \($0)" } ?? "signal \(worker.exitSignal ?? 0)") after SIGTERM")
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

    /// SIGTERM each worker in turn and start its replacement, which reads the
    /// configuration as it is now: a rolling restart. As an orchestrator's,
    /// it goes on only once the replacement is up (its probe listener, which
    /// it opens after trapping SIGTERM): the next pass must not stop, before
    /// its process has even begun, a worker the last one started.
    func rollingRestart() {
        for _ in 0..<workerCount {
            lock.lock()
            let victim = workers.isEmpty ? nil : workers.removeFirst()
            lock.unlock()
            guard let victim else { return }
            terminate(victim)
            guard (try? startWorker()) != nil else { continue }
            lock.lock()
            let replacement = workers.last
            lock.unlock()
            if let replacement { waitUntilUp(replacement) }
        }
    }

    /// Until the worker logs its probe listener (or 60 s, or it ends).
    private func waitUntilUp(_ worker: ChildProcess) {
        let logFile = work.appendingPathComponent("\(worker.name).log")
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, worker.isRunning {
            if let text = try? String(contentsOf: logFile, encoding: .utf8), text.contains("observability listening") { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// SIGKILL every worker at once and, `pause` later, start as many again; how many.
    func killEveryWorker(pause: TimeInterval) -> Int {
        lock.lock()
        let victims = workers
        workers.removeAll()
        lock.unlock()
        for victim in victims { victim.killNow() }
        Thread.sleep(forTimeInterval: pause)
        for _ in victims { try? startWorker() }
        return victims.count
    }

    func stopWorkers() {
        lock.lock()
        let running = workers
        workers.removeAll()
        lock.unlock()
        invariants.declare("workerDrainExit")
        let group = DispatchGroup()
        for worker in running {
            DispatchQueue.global().async(group: group) { [self] in terminate(worker) }
        }
        group.wait()
    }

    // MARK: after the faults

    /// Once the faults stop: every broker up and running, PostgreSQL running, a worker at least.
    func restoreServices() {
        if options.broker == .mock {
            for id in 1...3 { brokerCommand("up \(id)") }
        }
        resumeBroker()
        _ = postgresScript("resume")
        lock.lock()
        let count = workers.count
        lock.unlock()
        if count == 0 { try? startWorker() }
        webhooks.restore()
    }

    // MARK: watchdog

    /// Every half second: a worker, broker or PostgreSQL that ended without
    /// being told to is a finding. A worker is replaced (and is a violation:
    /// workers must not crash); the broker and PostgreSQL are restarted, and
    /// the run goes on to its checks.
    func startWatching() {
        let watching = Thread { [self] in watch(stop: watchStop) }
        watching.name = "chaos-watch"
        watching.start()
    }

    private func watch(stop: Flag) {
        invariants.declare("workerCrashed")
        // Once an interruption's cleanup has begun, nothing is restarted: a
        // cluster or broker it just stopped would otherwise come back and
        // outlive the harness.
        while !stop.isSet && !roster.isStopping {
            Thread.sleep(forTimeInterval: 0.5)
            if stop.isSet || roster.isStopping { break }
            checkWorkers()
            checkBroker()
            checkPostgres()
        }
    }

    func stopWatching() {
        watchStop.set()
        // One turn of `watch` at most is still under way; it sees the flag next.
        Thread.sleep(forTimeInterval: 0.6)
    }

    private func checkWorkers() {
        lock.lock()
        let ended = workers.filter { !$0.isRunning }
        workers.removeAll { worker in ended.contains { $0 === worker } }
        lock.unlock()
        for worker in ended {
            invariants.violation("workerCrashed", "\(worker.name) ended unasked (\(worker.ending ?? "?")); log: \(logTail("\(worker.name).log", lines: 3))")
            try? startWorker()
        }
    }

    private func checkBroker() {
        lock.lock()
        let planned = brokerFaultActive
        lock.unlock()
        guard !planned else { return }
        brokerLock.lock()
        let current = broker
        brokerLock.unlock()
        guard let current, !current.isRunning else { return }
        let excerpt = logTail("broker.log", lines: 5)
        incident("brokerDied: the \(current.kind.rawValue) broker ended unasked (\(current.ending ?? "?")); log: \(excerpt)")
        restartBroker(asked: false)
    }

    /// A memory-only broker comes back empty, on new ports: every worker is
    /// stopped with the old one (they would wait on its addresses), the stored
    /// positions are deleted (they count offsets of a log that is gone; the
    /// workers' own answer to such positions, an offset gap, has tests of its
    /// own), and the producer sends everything again. What such a run still
    /// proves: no event lost or stored twice across the loss of the broker and
    /// every worker at once, and every later invariant on the new broker.
    /// `asked`: the brokerRestart fault, not a broker that died (an incident).
    private func restartBroker(asked: Bool) {
        lock.lock()
        let stopped = workers
        workers.removeAll()
        lock.unlock()
        for worker in stopped { worker.killNow() }
        do {
            try startBroker()
            try rewriteBootstrap()
        } catch {
            incident("brokerRestartFailed: \(error)")
            return
        }
        // PostgreSQL may be down under a fault of its own right now; it comes
        // back, and no worker may start before the old positions are gone.
        let deadline = Date().addingTimeInterval(180)
        var reset = false
        while !reset && Date() < deadline {
            if let connection = try? connect() {
                reset = (try? connection.execute("DELETE FROM consumer_positions WHERE consumer_group = $1", [.text(ChaosKafka.group)])) != nil
                connection.close()
            }
            if !reset {
                // The watchdog is busy here, so it looks after PostgreSQL itself.
                checkPostgres()
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        guard reset else {
            incident("brokerRestartFailed: PostgreSQL did not answer for 180 s, so the old positions could not be reset")
            return
        }
        // Only now, with the new addresses in place: the producer makes its
        // new client as soon as it sees the epoch change.
        delivery.newEpoch()
        lock.lock()
        brokerRestarts += 1
        lastRestart = Date()
        lock.unlock()
        let report = "brokerRestarted: new \(options.broker.rawValue) broker at \(currentBootstrap); \(stopped.count) workers stopped with the old one and \(options.workers) started; positions reset; every record produced so far sent again"
        if asked { log(report) } else { incident(report) }
        for _ in 0..<options.workers { try? startWorker() }
    }

    private func rewriteBootstrap() throws {
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as! [String: Any]
        var kafka = root["kafka"] as! [String: Any]
        kafka["bootstrapServers"] = currentBootstrap
        root["kafka"] = kafka
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: config)
    }

    private func checkPostgres() {
        lock.lock()
        let planned = postgresFaultActive
        let pids = postmasterPIDs
        lock.unlock()
        guard !planned, !pids.isEmpty else { return }
        let alive = pids.contains { ChildProcess.exists($0, commandContaining: postgresDirectory.path) }
        guard !alive else { return }
        // Read again under the flag: a postgres fault may have begun meanwhile.
        lock.lock()
        let faultBegan = postgresFaultActive
        lock.unlock()
        guard !faultBegan, !roster.isStopping else { return }
        let excerpt = (try? String(contentsOf: postgresDirectory.appendingPathComponent("server.log"), encoding: .utf8))
            .map { $0.split(separator: "\n").suffix(3).joined(separator: " | ") } ?? ""
        incident("postgresDied: the postmaster ended unasked; log: \(excerpt)")
        if postgresScript("resume") {
            lock.lock()
            postgresRestarts += 1
            lock.unlock()
            incident("postgresRestarted: same data, same port")
        } else {
            incident("postgresRestartFailed")
        }
    }

    private func incident(_ text: String) {
        log(text)
        lock.lock()
        incidents.append(text)
        lock.unlock()
    }

    private func logTail(_ file: String, lines: Int) -> String {
        ((try? String(contentsOf: work.appendingPathComponent(file), encoding: .utf8)) ?? "")
            .split(separator: "\n").suffix(lines).joined(separator: " | ")
    }

    // MARK: teardown

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
        webhooks.receiver.kill()
        broker?.stop()
        _ = postgresScript("stop")
        lock.lock()
        let token = interruptionToken
        lock.unlock()
        if let token { Interruption.unregister(token) }
    }

    /// Processes still running after the teardown: a violation each.
    func checkNoProcessLeft() {
        invariants.declare("processesLeft")
        lock.lock()
        let children = allChildren
        let postmasters = postmasterPIDs
        lock.unlock()
        // By its own wait status only: once reaped, its pid may already be
        // another process's (another test's veridoc, say).
        for child in children where child.isRunning {
            invariants.violation("processesLeft", "\(child.name) (pid \(child.pid)) still running")
        }
        if webhooks.receiver.isRunning { invariants.violation("processesLeft", "the webhook receiver still running") }
        for pid in postmasters where ChildProcess.exists(pid, commandContaining: postgresDirectory.path) {
            invariants.violation("processesLeft", "postmaster pid \(pid) still running")
        }
    }
}
