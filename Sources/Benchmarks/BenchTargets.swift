import DemoKit
extension BenchReport {
    /// A goal of the product, as a ratio or a figure from this run: the
    /// naive ceiling (one HPKE open and two ECDSA P-256 verifications with
    /// OpenSSL as shipped) is the fixed yardstick the verify pool and the
    /// worker's CPU are held to, so that progress is measured against it.
    public struct Target: Codable, Sendable {
        public var name: String
        public var measured: Double
        public var unit: String
        public var goal: String
        public var met: Bool
    }

    /// The targets this run's sections can speak to (none for a skipped section).
    static func targets(ceiling: Ceiling, verifyPool: [PoolRun], endToEnd: EndToEnd?, api: API? = nil) -> [Target] {
        var targets: [Target] = []
        targets += api?.targets ?? []
        let single = verifyPool.filter { $0.threads == 1 && $0.issuers == 1 && $0.tenants == 1 }
        if let unique = single.first(where: { $0.repeatShare == 0 }) {
            targets.append(Target("verify pool, 1 thread, unique credentials ÷ naive ceiling", unique.ratioToCeiling, "×", atLeast: 1.0))
        }
        if let repeated = single.first(where: { $0.repeatShare > 0 }) {
            targets.append(Target("verify pool, 1 thread, \(Int((repeated.repeatShare * 100).rounded())) % presented again ÷ naive ceiling",
                                  repeated.ratioToCeiling, "×", atLeast: 1.3))
        }
        guard let e2e = endToEnd else { return targets }
        let perWorkerCPUSecond = 1000 / max(e2e.peak.cpuMillisecondsPerEvent, 1e-9)
        targets.append(Target("worker efficiency: events per worker CPU-second at peak ÷ naive ceiling",
                              perWorkerCPUSecond / ceiling.eventsPerSecondPerCore, "×", atLeast: 0.8))
        if let postgres = e2e.peak.postgresCPUMillisecondsPerEvent {
            targets.append(Target("PostgreSQL CPU per event at peak", postgres, "ms", atMost: 0.05))
        }
        if let p99 = e2e.latency.latencyP99Milliseconds {
            targets.append(Target("latency p99 at half of peak", p99, "ms", below: 100))
        }
        targets.append(Target("steady RSS at half of peak", e2e.latency.peakRSSMegabytes, "MB", below: 150))
        if let backlog = e2e.backlog {
            targets.append(Target("peak RSS draining the backlog", backlog.peakRSSMegabytes, "MB", below: 150))
            targets.append(Target("worker CPU per event draining the backlog ÷ at peak",
                                  backlog.cpuMillisecondsPerEvent / max(e2e.peak.cpuMillisecondsPerEvent, 1e-9), "×", atMost: 1.1))
        }
        return targets
    }

    func targetsTable() -> [String] {
        var lines = ["## Targets", "", "| target | measured | goal | met |", "|---|---:|---:|:---:|"]
        for target in targets {
            lines.append("| \(target.name) | \(String(format: target.measured >= 10 ? "%.1f" : "%.3f", target.measured)) \(target.unit) | \(target.goal) | \(target.met ? "yes" : "**no**") |")
        }
        if targets.isEmpty { lines.append("| (no section measured) | | | |") }
        return lines
    }
}

extension BenchReport.API {
    /// The HTTP front's goals: others are served while slow clients and one
    /// tenant's long polls hold connections; waiters held cost creations
    /// little, and each is answered soon after its outcome, once.
    public var targets: [BenchReport.Target] {
        var targets: [BenchReport.Target] = []
        if let front {
            let held = "\(front.slowClients) slowloris + \(front.longPolls) long polls held"
            targets += [BenchReport.Target("another tenant's POST /v1/sessions p99, \(held)", front.sessionP99Milliseconds, "ms", atMost: 200),
                        BenchReport.Target("GET /healthz p99, \(held)", front.healthP99Milliseconds, "ms", atMost: 100)]
        }
        if let waiters {
            let held = waiters.polls.held + waiters.streams.held
            targets += [BenchReport.Target("POST /v1/sessions with \(waiters.label) ÷ without", waiters.throughputRatio, "×", atLeast: 0.9),
                        BenchReport.Target("waiter answered after its session's completion p99, \(waiters.label)", waiters.answerP99Milliseconds, "ms", atMost: 100),
                        BenchReport.Target("waiters answered exactly once ÷ \(held) held", Double(waiters.answeredOnce) / Double(max(held, 1)), "×", atLeast: 1)]
        }
        return targets
    }
}

extension BenchReport.Target {
    init(_ name: String, _ measured: Double, _ unit: String, atLeast minimum: Double) {
        self.init(name: name, measured: measured, unit: unit, goal: "≥ \(Self.format(minimum)) \(unit)", met: measured >= minimum)
    }

    init(_ name: String, _ measured: Double, _ unit: String, below maximum: Double) {
        self.init(name: name, measured: measured, unit: unit, goal: "< \(Self.format(maximum)) \(unit)", met: measured < maximum)
    }

    init(_ name: String, _ measured: Double, _ unit: String, atMost maximum: Double) {
        self.init(name: name, measured: measured, unit: unit, goal: "≤ \(Self.format(maximum)) \(unit)", met: measured <= maximum)
    }

    static func format(_ value: Double) -> String {
        value >= 10 ? String(format: "%.0f", value) : String(format: "%.3g", value)
    }
}
