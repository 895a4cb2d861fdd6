import Foundation
import Postgres
import TestIssuer

extension ChaosHarness {
    /// The seeded schedule: `faultCount` faults spread over the duration, kinds
    /// dealt from shuffled rounds of every kind, SIGKILL three times per round
    /// (so a run of 13+ faults has each kind at least once), run one after another.
    func injectFaults() {
        // Request errors need the mock's control channel; broker restarts are dealt apart.
        let applicable = FaultKind.allCases.filter { kind in
            kind != .brokerRestart && (options.broker == .mock || ![.produceErrors, .fetchErrors, .commitErrors].contains(kind))
        }
        let kinds = applicable + [.workerKill, .workerKill]
        var schedule: [(at: TimeInterval, kind: FaultKind)] = []
        var deck: [FaultKind] = []
        let count = options.faultCount
        let spacing = options.duration * 0.9 / Double(max(count, 1))
        let restarts = options.brokerRestartCount
        for index in 0..<count {
            if deck.isEmpty { deck = shuffled(kinds) }
            let jitter = Double(random.next() % 1000) / 1000 * spacing * 0.5
            // Restarts at even intervals, in the first 70 % (while producing).
            let kind = restarts > 0 && (index + 1) % max(1, Int(Double(count) * 0.7) / restarts) == 0 && index < Int(Double(count) * 0.7)
                ? FaultKind.brokerRestart : deck.removeFirst()
            schedule.append((options.duration * 0.05 + Double(index) * spacing + jitter, kind))
        }
        let started = Date()
        for (at, kind) in schedule {
            let wait = at - Date().timeIntervalSince(started)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            let elapsed = Date().timeIntervalSince(started)
            log(String(format: "t=%5.1fs fault %@", elapsed, kind.rawValue))
            if inject(kind) {
                lock.lock()
                faultCounts[kind, default: 0] += 1
                lock.unlock()
            }
        }
        let rest = options.duration - Date().timeIntervalSince(started)
        if rest > 0 { Thread.sleep(forTimeInterval: rest) }
    }

    private func shuffled<T>(_ items: [T]) -> [T] {
        var items = items
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            let other = Int(random.next() % UInt64(index + 1))
            items.swapAt(index, other)
        }
        return items
    }

    private func pick(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(random.next() % 10_000) / 10_000 * (range.upperBound - range.lowerBound)
    }

    /// Runs one fault; false when it could not apply (e.g. no worker to kill).
    private func inject(_ kind: FaultKind) -> Bool {
        switch kind {
        case .workerKill:
            guard workerCount > 0 else { return false }
            // A random moment: up to a second from now, wherever the worker is.
            Thread.sleep(forTimeInterval: pick(0...1))
            let victim = removeWorker(at: Int(random.next() % UInt64(workerCount)))
            victim.killNow()
            Thread.sleep(forTimeInterval: pick(0.2...1.5))
            try? startWorker()
        case .workerRestart:
            guard workerCount > 0 else { return false }
            let victim = removeWorker(at: Int(random.next() % UInt64(workerCount)))
            terminate(victim)
            try? startWorker()
        case .workerJoin:
            guard workerCount < options.workers + 2 else { return inject(.workerLeave) }
            try? startWorker()
        case .workerLeave:
            guard workerCount > 1 else { return inject(.workerJoin) }
            terminate(removeWorker(at: Int(random.next() % UInt64(workerCount))))
        case .brokerDown:
            let seconds = pick(2...5)
            if options.broker == .mock {
                let id = 1 + random.next() % 3
                brokerCommand("down \(id)")
                Thread.sleep(forTimeInterval: seconds)
                brokerCommand("up \(id)")
            } else {
                withBroker { $0.pause() }
                Thread.sleep(forTimeInterval: seconds)
                withBroker { $0.resume() }
            }
        case .brokerRestart:
            setBrokerFault(true)
            defer { setBrokerFault(false) }
            withBroker { broker in
                kill(broker.pid, SIGKILL)
                _ = waitUntilEnded(broker)
            }
            restartBroker(asked: true)
        case .produceErrors:
            return brokerCommand("errors 0 \(codes(commit: false))").hasPrefix("OK")
        case .fetchErrors:
            return brokerCommand("errors 1 \(codes(commit: false))").hasPrefix("OK")
        case .commitErrors:
            return brokerCommand("errors 8 \(codes(commit: true))").hasPrefix("OK")
        case .postgresRestart:
            lock.lock()
            postgresFaultActive = true
            lock.unlock()
            defer {
                lock.lock()
                postgresFaultActive = false
                lock.unlock()
            }
            guard postgresScript("pause") else { return false }
            Thread.sleep(forTimeInterval: pick(2...4))
            return postgresScript("resume")
        case .postgresTerminate:
            guard let connection = try? connect() else { return false }
            defer { connection.close() }
            let killed = try? connection.execute("SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity WHERE application_name = 'veridoc-worker'")
            return killed != nil
        case .postgresSlow:
            guard let connection = try? connect() else { return false }
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

    private func withBroker(_ body: (ChaosBroker) -> Void) {
        brokerLock.lock()
        defer { brokerLock.unlock() }
        body(broker)
    }

    private func waitUntilEnded(_ broker: ChaosBroker) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while broker.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return !broker.isRunning
    }

    func setBrokerFault(_ active: Bool) {
        lock.lock()
        brokerFaultActive = active
        lock.unlock()
    }

    /// A short burst of retriable error codes: REQUEST_TIMED_OUT (7), NOT_LEADER_OR_FOLLOWER (6),
    /// and for commits COORDINATOR_LOAD_IN_PROGRESS (14) / NOT_COORDINATOR (16).
    private func codes(commit: Bool) -> String {
        let pool: [Int32] = commit ? [7, 14, 16] : [7, 6]
        let count = 2 + Int(random.next() % 4)
        return (0..<count).map { _ in "\(pool[Int(random.next() % UInt64(pool.count))])" }.joined(separator: ",")
    }
}
