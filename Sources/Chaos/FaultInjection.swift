import Foundation
import Postgres
import TestIssuer

/// Runs a fault schedule against the run's services, one fault after another,
/// on the caller's thread. It draws the details (which worker, how long, which
/// error codes) from the random source the schedule was dealt from, and counts
/// the faults that applied.
struct FaultInjector {
    let schedule: FaultSchedule
    var random: TestIssuer.SeededRandom
    let options: ChaosOptions
    let supervisor: Supervisor
    let log: @Sendable (String) -> Void
    /// Faults that applied, by kind.
    private(set) var counts: [FaultKind: Int] = [:]

    /// Each fault at its time, then the rest of the duration.
    mutating func run() {
        let started = Date()
        for fault in schedule.faults {
            let wait = fault.at - Date().timeIntervalSince(started)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            let elapsed = Date().timeIntervalSince(started)
            log(String(format: "t=%5.1fs fault %@", elapsed, fault.kind.rawValue))
            if inject(fault.kind) { counts[fault.kind, default: 0] += 1 }
        }
        let rest = options.duration - Date().timeIntervalSince(started)
        if rest > 0 { Thread.sleep(forTimeInterval: rest) }
    }

    private mutating func pick(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(random.next() % 10_000) / 10_000 * (range.upperBound - range.lowerBound)
    }

    /// Runs one fault; false when it could not apply (e.g. no worker to kill).
    private mutating func inject(_ kind: FaultKind) -> Bool {
        switch kind {
        case .workerKill:
            guard supervisor.workerCount > 0 else { return false }
            // A random moment: up to a second from now, wherever the worker is.
            Thread.sleep(forTimeInterval: pick(0...1))
            let victim = supervisor.removeWorker(at: Int(random.next() % UInt64(supervisor.workerCount)))
            victim.killNow()
            Thread.sleep(forTimeInterval: pick(0.2...1.5))
            try? supervisor.startWorker()
        case .workerRestart:
            guard supervisor.workerCount > 0 else { return false }
            let victim = supervisor.removeWorker(at: Int(random.next() % UInt64(supervisor.workerCount)))
            supervisor.terminate(victim)
            try? supervisor.startWorker()
        case .workerJoin:
            guard supervisor.workerCount < options.workers + 2 else { return inject(.workerLeave) }
            try? supervisor.startWorker()
        case .workerLeave:
            guard supervisor.workerCount > 1 else { return inject(.workerJoin) }
            supervisor.terminate(supervisor.removeWorker(at: Int(random.next() % UInt64(supervisor.workerCount))))
        case .brokerDown:
            let seconds = pick(2...5)
            if options.broker == .mock {
                let id = 1 + random.next() % 3
                supervisor.brokerCommand("down \(id)")
                Thread.sleep(forTimeInterval: seconds)
                supervisor.brokerCommand("up \(id)")
            } else {
                supervisor.pauseBroker()
                Thread.sleep(forTimeInterval: seconds)
                supervisor.resumeBroker()
            }
        case .brokerRestart:
            supervisor.replaceBroker()
        case .produceErrors:
            return supervisor.brokerCommand("errors 0 \(codes(commit: false))").hasPrefix("OK")
        case .fetchErrors:
            return supervisor.brokerCommand("errors 1 \(codes(commit: false))").hasPrefix("OK")
        case .commitErrors:
            return supervisor.brokerCommand("errors 8 \(codes(commit: true))").hasPrefix("OK")
        case .postgresRestart:
            return supervisor.duringPostgresFault {
                guard supervisor.postgresScript("pause") else { return false }
                Thread.sleep(forTimeInterval: pick(2...4))
                return supervisor.postgresScript("resume")
            }
        case .postgresTerminate:
            guard let connection = try? supervisor.connect() else { return false }
            defer { connection.close() }
            let killed = try? connection.execute("SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity WHERE application_name = 'veridoc-worker'")
            return killed != nil
        case .receiverDown:
            supervisor.webhooks.receiver.kill()
            Thread.sleep(forTimeInterval: pick(2...5))
            // If it cannot start again now, restoreServices tries once the faults stop.
            return (try? supervisor.webhooks.receiver.start()) != nil
        case .receiverSlow:
            let seconds = ChaosWebhooks.timeoutSeconds + 2
            return supervisor.webhooks.receiver.queue(["slow:\(seconds)", "slow:\(seconds)"])
        case .receiverErrors:
            return supervisor.webhooks.receiver.queue(["500", "500"])
        case .receiverThrottled:
            return supervisor.webhooks.receiver.queue(["429:2", "429:1"])
        case .receiverRedirect:
            return supervisor.webhooks.receiver.queue(["302", "307"])
        case .receiverHuge:
            return supervisor.webhooks.receiver.queue(["huge"])
        case .receiverGone:
            return endpointGone()
        case .workerKillDuringDelivery:
            return killDuringDelivery()
        case .webhookSecretRotation:
            return supervisor.webhooks.rotateSecret { supervisor.rollingRestart() }
        case .postgresSlow:
            guard let connection = try? supervisor.connect() else { return false }
            defer { connection.close() }
            do {
                _ = try connection.execute("BEGIN")
                _ = try connection.execute("LOCK TABLE results IN ACCESS EXCLUSIVE MODE")
                Thread.sleep(forTimeInterval: pick(2...5))
                _ = try connection.execute("COMMIT")
            } catch {
                return false
            }
        }
        return true
    }

    /// A 410 for the next delivery; once it was answered, the operator enables
    /// the endpoint again a little later (deliveries wait meanwhile). No
    /// delivery within a while (production over): the 410 is taken back.
    private mutating func endpointGone() -> Bool {
        let receiver = supervisor.webhooks.receiver
        guard let before = receiver.answered("410"), receiver.queue(["410"]) else { return false }
        let deadline = Date().addingTimeInterval(15)
        while (receiver.answered("410") ?? before) == before {
            guard Date() < deadline else {
                receiver.queue([], clearingFirst: true)
                return false
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        Thread.sleep(forTimeInterval: pick(1...3))
        return supervisor.webhooks.enableEndpoint()
    }

    /// The receiver holds the next delivery unanswered for a few seconds;
    /// while it does, every worker is SIGKILLed (which one sends it is not
    /// known here) and as many start again. The delivery is sent again once
    /// its claim runs out, under the same webhook-id.
    private mutating func killDuringDelivery() -> Bool {
        let receiver = supervisor.webhooks.receiver
        guard supervisor.workerCount > 0, receiver.queue(["slow:3"]) else { return false }
        let deadline = Date().addingTimeInterval(15)
        while (receiver.inFlight() ?? 0) == 0 {
            guard Date() < deadline else {
                receiver.queue([], clearingFirst: true)
                return false
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return supervisor.killEveryWorker(pause: pick(0.2...1)) > 0
    }

    /// A short burst of retriable error codes: REQUEST_TIMED_OUT (7), NOT_LEADER_OR_FOLLOWER (6),
    /// and for commits COORDINATOR_LOAD_IN_PROGRESS (14) / NOT_COORDINATOR (16).
    private mutating func codes(commit: Bool) -> String {
        let pool: [Int32] = commit ? [7, 14, 16] : [7, 6]
        let count = 2 + Int(random.next() % 4)
        return (0..<count).map { _ in "\(pool[Int(random.next() % UInt64(pool.count))])" }.joined(separator: ",")
    }
}
