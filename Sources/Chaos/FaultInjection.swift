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

    /// A short burst of retriable error codes: REQUEST_TIMED_OUT (7), NOT_LEADER_OR_FOLLOWER (6),
    /// and for commits COORDINATOR_LOAD_IN_PROGRESS (14) / NOT_COORDINATOR (16).
    private mutating func codes(commit: Bool) -> String {
        let pool: [Int32] = commit ? [7, 14, 16] : [7, 6]
        let count = 2 + Int(random.next() % 4)
        return (0..<count).map { _ in "\(pool[Int(random.next() % UInt64(pool.count))])" }.joined(separator: ",")
    }
}
