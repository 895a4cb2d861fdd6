import Foundation
import TestIssuer

/// Runs real `veridoc run` workers against a `veridoc-dev dev-broker` process and a
/// PostgreSQL cluster of its own, injects faults on a seeded schedule while
/// events are produced, then stops the faults, lets the workers converge and
/// checks the invariants from the database and the topics. It wires the parts
/// and runs the phases: the supervisor (the processes), the traffic (the
/// producer), the fault schedule and its injector, the invariant checks and
/// the ledger they and the others report violations to.
public final class ChaosHarness: Sendable {
    let options: ChaosOptions
    let log: @Sendable (String) -> Void
    let work: URL

    public init(options: ChaosOptions, log: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.log = log
        work = URL(fileURLWithPath: "/tmp/veridoc-chaos-\(UUID().uuidString.prefix(8).lowercased())")
    }

    public func run() throws -> ChaosSummary {
        guard ChaosReceiver.available(repository: options.repository) else {
            throw ChildProcess.Failure(description: "the webhook receiver needs the tools venv's python with standardwebhooks: "
                                       + "`make chaos` installs it (make .build/tools-venv/.standardwebhooks)")
        }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        chmod(work.path, 0o755)
        var summary = ChaosSummary()
        summary.seed = options.seed
        summary.durationSeconds = options.duration
        summary.brokerRestartSchedule = options.brokerRestarts ? "restarts" : "none"
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
        log("work directory: \(work.path)")

        var factory = try TestIssuer.EventFactory(now: Date(), seed: options.seed)
        // Fresh event times and a day of allowed age: request.expired cannot flip
        // between the reference verification and the worker's.
        factory.merchant.maxRequestAgeSeconds = 86_400
        let configDirectory = work.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        let config = try factory.merchant.writeConfiguration(to: configDirectory, trustAnchors: [factory.authority.iaca])

        let invariants = InvariantLedger()
        let delivery = DeliveryLedger()
        let supervisor = Supervisor(options: options, work: work, config: config, invariants: invariants, delivery: delivery, log: log)
        supervisor.registerInterruption()
        defer { supervisor.teardown() }

        try supervisor.startPostgres()
        try supervisor.startBroker()
        try supervisor.completeConfiguration()
        let traffic = try Traffic(factory: factory, options: options, delivery: delivery, invariants: invariants,
                                  bootstrap: { supervisor.currentBootstrap }, log: log)
        for _ in 0..<options.workers { try supervisor.startWorker() }
        supervisor.startWatching()
        let deadLetters = TopicWatch.deadLetters(delivery: delivery, bootstrap: { supervisor.currentBootstrap })
        let outcomes = TopicWatch.outcomes(delivery: delivery, bootstrap: { supervisor.currentBootstrap })
        let checks = InvariantChecks(options: options, invariants: invariants, traffic: traffic, supervisor: supervisor, deadLetters: deadLetters,
                                     outcomes: outcomes, log: log)

        let stop = Flag()
        let producing = Thread { traffic.produce(stop: stop) }
        producing.name = "chaos-produce"
        producing.start()
        let sampling = Thread { checks.sample(stop: stop) }
        sampling.name = "chaos-sample"
        sampling.start()
        let watchStop = Flag()
        for watch in [deadLetters, outcomes] {
            let watching = Thread { watch.watch(stop: watchStop) }
            watching.name = "chaos-watch-\(watch.topic)"
            watching.start()
        }

        var random = FaultSchedule.random(seed: options.seed)
        let schedule = FaultSchedule(options: options, random: &random)
        var injector = FaultInjector(schedule: schedule, random: random, options: options, supervisor: supervisor, log: log)
        injector.run()
        log("faults done; waiting for convergence")
        supervisor.restoreServices()
        let converged = checks.waitForConvergence()
        summary.convergedAfterSeconds = converged
        stop.set()
        producing.cancel()
        Thread.sleep(forTimeInterval: 1.2)

        supervisor.stopWatching()
        supervisor.stopWorkers()
        watchStop.set()
        Thread.sleep(forTimeInterval: 0.5)
        try checks.check(into: &summary)
        summary.faults = Dictionary(uniqueKeysWithValues: injector.counts.map { ($0.key.rawValue, $0.value) })
        supervisor.report(into: &summary)
        supervisor.teardown()
        supervisor.checkNoProcessLeft()
        summary.invariants = invariants.counts
        summary.examples = invariants.examples
        summary.positionSnapshotsChecked = checks.snapshotsChecked
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
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
