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

extension ChaosHarness {
    /// Every half second: a worker, broker or PostgreSQL that ended without
    /// being told to is a finding. A worker is replaced (and is a violation:
    /// workers must not crash); the broker and PostgreSQL are restarted, and
    /// the run goes on to its checks.
    func watch(stop: Flag) {
        declare("workerCrashed")
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
            violation("workerCrashed", "\(worker.name) ended unasked (\(worker.ending ?? "?")); log: \(logTail("\(worker.name).log", lines: 3))")
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
    func restartBroker(asked: Bool) {
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
                reset = (try? connection.execute("DELETE FROM consumer_positions WHERE consumer_group = $1", [.text(Self.group)])) != nil
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
        // The positions of the old log would make the backlog of the new one
        // look consumed, and the resend that follows would outrun the bound.
        latestPositions = [:]
        brokerRestarts += 1
        lastBrokerRestart = Date()
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

    func incident(_ text: String) {
        log(text)
        lock.lock()
        incidents.append(text)
        lock.unlock()
    }

    func logTail(_ file: String, lines: Int) -> String {
        ((try? String(contentsOf: work.appendingPathComponent(file), encoding: .utf8)) ?? "")
            .split(separator: "\n").suffix(lines).joined(separator: " | ")
    }
}
