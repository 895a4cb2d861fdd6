import DemoKit
import Foundation

/// What `make bench` writes to bench/results/latest.json and latest.md.
/// Ratios are the point: every stage is set against the crypto ceiling
/// measured in the same run on the same machine.
public struct BenchReport: Codable, Sendable {
    public struct Machine: Codable, Sendable {
        public var cores: Int
        public var cpuModel: String
        public var openSSL: String
        public var kernel: String
        public var memoryMegabytes: Int
    }

    public struct Ceiling: Codable, Sendable {
        public var primitives: [Primitive]
        /// What one benchmark event costs in public-key crypto.
        public var perEvent: String
        public var cryptoMicrosecondsPerEvent: Double
        public var eventsPerSecondPerCore: Double

        /// From the best rates of `Benchmark.primitives`, listed in `order`.
        /// An Apple in-app event: one HPKE open (one ECDH) and two P-256
        /// verifies (issuer, device); the DS → IACA chain check is cached per
        /// document signer.
        public init(rates: [String: Double], order: [String]) {
            primitives = order.map { Primitive(name: $0, operationsPerSecond: rates[$0]!) }
            let seconds = 1 / rates["HPKE open 6 KB"]! + 2 / rates["ECDSA P-256 verify"]!
            perEvent = "1 HPKE open 6 KB + 2 ECDSA P-256 verify"
            cryptoMicrosecondsPerEvent = seconds * 1e6
            eventsPerSecondPerCore = 1 / seconds
        }

        /// events/s ÷ (the ceiling per core × cores): what every stage is set against.
        func ratio(_ eventsPerSecond: Double, cores: Int) -> Double {
            eventsPerSecond / (eventsPerSecondPerCore * Double(cores))
        }
    }

    public struct Primitive: Codable, Sendable {
        public var name: String
        public var operationsPerSecond: Double
    }

    public struct PoolRun: Codable, Sendable {
        public var threads: Int
        public var events: Int
        public var verified: Int
        public var eventsPerSecond: Double
        /// events/s ÷ (ceiling per core × min(threads, cores)).
        public var ratioToCeiling: Double
        /// How many issuing authorities and tenants the corpus is spread over.
        public var issuers: Int
        public var tenants: Int
        /// The share of events presenting the credential of an event before them again.
        public var repeatShare: Double

        /// `cores`: the machine's; a pool runs on at most that many of its threads at once.
        public init(threads: Int, events: Int, verified: Int, eventsPerSecond: Double, ceiling: Ceiling, cores: Int, issuers: Int = 1, tenants: Int = 1,
                    repeatShare: Double = 0) {
            self.issuers = issuers
            self.tenants = tenants
            self.repeatShare = repeatShare
            self.threads = threads
            self.events = events
            self.verified = verified
            self.eventsPerSecond = eventsPerSecond
            ratioToCeiling = ceiling.ratio(eventsPerSecond, cores: min(threads, cores))
        }
    }

    public struct EndToEnd: Codable, Sendable {
        public var peak: EndToEndBench.Run
        /// peak ÷ (ceiling per core × cores).
        public var peakRatioToCeilingTimesCores: Double
        public var latency: EndToEndBench.Run
        /// Crypto CPU per event ÷ the workers' CPU per event at peak.
        public var cryptoShareOfWorkerCPU: Double
        /// A backlog staged before the worker started, drained by it.
        public var backlog: EndToEndBench.Run?

        public init(peak: EndToEndBench.Run, latency: EndToEndBench.Run, backlog: EndToEndBench.Run? = nil, ceiling: Ceiling, cores: Int) {
            self.backlog = backlog
            self.peak = peak
            peakRatioToCeilingTimesCores = ceiling.ratio(peak.eventsPerSecond, cores: cores)
            self.latency = latency
            cryptoShareOfWorkerCPU = ceiling.cryptoMicrosecondsPerEvent / 1000 / max(peak.cpuMillisecondsPerEvent, 1e-9)
        }
    }

    public struct ScalingRow: Codable, Sendable {
        public var run: EndToEndBench.Run
        public var ratioToCeilingTimesCores: Double

        public init(run: EndToEndBench.Run, ceiling: Ceiling, cores: Int) {
            self.run = run
            ratioToCeilingTimesCores = ceiling.ratio(run.eventsPerSecond, cores: cores)
        }
    }

    /// A valid event verified in a child process: the baseline of the hostile row's ratios.
    public struct HostileNormal: Codable, Sendable {
        public var flow: String
        public var bytes: Int
        public var cpuMilliseconds: Double
        public var peakRSSMegabytes: Double
        public var verdict: String
    }

    /// One hostile event, verified in a child process, against the valid event of its flow and size.
    public struct HostileMeasure: Codable, Sendable {
        public var bytes: Int
        /// Items of the dimension the event carries.
        public var count: Int
        /// The child's user + system CPU, ms.
        public var cpuMilliseconds: Double
        public var peakRSSMegabytes: Double
        /// ÷ the valid event's, whole processes.
        public var cpuRatio: Double
        public var rssRatio: Double
        /// What the event costs beyond a process's start-up ÷ what a valid event of its size does, both from
        /// `Hostile.validLine`: what verifying costs in a worker, which starts once. Set by `Hostile.init`.
        public var netCPURatio: Double = 0
        public var netRSSRatio: Double = 0
        /// verified, rejected, timeout (killed at the time limit: the ratios are lower bounds) or error.
        public var verdict: String
        public var reasons: [String]

        public init(bytes: Int, count: Int, cpuMilliseconds: Double, peakRSSMegabytes: Double, normal: HostileNormal, verdict: String, reasons: [String]) {
            self.bytes = bytes
            self.count = count
            self.cpuMilliseconds = cpuMilliseconds
            self.peakRSSMegabytes = peakRSSMegabytes
            cpuRatio = cpuMilliseconds / max(normal.cpuMilliseconds, 1e-9)
            rssRatio = peakRSSMegabytes / max(normal.peakRSSMegabytes, 1e-9)
            self.verdict = verdict
            self.reasons = reasons
        }
    }

    /// One hostile dimension: its largest event within the size limit and, when
    /// the verifier refuses that one for a budget (its reasons differ from a
    /// small event's of the dimension), the largest it still reads through.
    public struct HostileRow: Codable, Sendable {
        public var dimension: String
        public var flow: String
        public var atLimit: HostileMeasure
        public var largestRead: HostileMeasure?

        var measures: [HostileMeasure] { [atLimit] + (largestRead.map { [$0] } ?? []) }
    }

    /// What valid events cost by size, fitted (least squares) through every
    /// valid event measured: the intercept is a process's start-up, the slope
    /// what verifying costs per MiB. One start-up varies by more than a valid
    /// event of a few MB costs beyond it, so no single pair of runs is used.
    public struct HostileLine: Codable, Sendable {
        public var startupCPUMilliseconds: Double
        public var cpuMillisecondsPerMiB: Double
        public var startupRSSMegabytes: Double
        public var rssMegabytesPerMiB: Double

        init(_ points: [HostileNormal]) {
            func fit(_ y: (HostileNormal) -> Double) -> (intercept: Double, slope: Double) {
                let xs = points.map { Double($0.bytes) / 1_048_576 }
                let ys = points.map(y)
                let n = Double(max(points.count, 1))
                let (mx, my) = (xs.reduce(0, +) / n, ys.reduce(0, +) / n)
                let variance = zip(xs, xs).map { ($0 - mx) * ($1 - mx) }.reduce(0, +)
                let slope = variance > 0 ? max(0, zip(xs, ys).map { ($0 - mx) * ($1 - my) }.reduce(0, +) / variance) : 0
                return (max(0, my - slope * mx), slope)
            }
            (startupCPUMilliseconds, cpuMillisecondsPerMiB) = fit(\.cpuMilliseconds)
            (startupRSSMegabytes, rssMegabytesPerMiB) = fit(\.peakRSSMegabytes)
        }

        /// Floors of 1 ms and 1 MB on a valid event's share: below them one run's
        /// noise, not the hostile event, would make the ratio.
        func net(_ measure: HostileMeasure) -> (cpu: Double, rss: Double) {
            let mebibytes = Double(measure.bytes) / 1_048_576
            return (max(measure.cpuMilliseconds - startupCPUMilliseconds, 0) / max(cpuMillisecondsPerMiB * mebibytes, Hostile.cpuFloor),
                    max(measure.peakRSSMegabytes - startupRSSMegabytes, 0) / max(rssMegabytesPerMiB * mebibytes, Hostile.rssFloor))
        }
    }

    public struct Hostile: Codable, Sendable {
        static let cpuFloor = 1.0
        static let rssFloor = 1.0

        public var maxEventBytes: Int
        public var runsPerEvent: Int
        public var timeoutSeconds: Double
        /// The worst ratio aimed at (reported, not enforced).
        public var goalRatio: Double
        /// The smallest valid event: starting a process, loading the config, one small verification.
        public var startup: HostileNormal
        public var normal: [HostileNormal]
        /// Fitted through `startup` and `normal`; the net ratios' baseline.
        public var validLine: HostileLine
        public var rows: [HostileRow]
        public var worstCPURatio: Double
        public var worstRSSRatio: Double
        public var worstNetCPURatio: Double
        public var worstNetRSSRatio: Double

        public init(maxEventBytes: Int, runsPerEvent: Int, timeoutSeconds: Double, goalRatio: Double, startup: HostileNormal, normal: [HostileNormal],
                    rows: [HostileRow]) {
            self.maxEventBytes = maxEventBytes
            self.runsPerEvent = runsPerEvent
            self.timeoutSeconds = timeoutSeconds
            self.goalRatio = goalRatio
            self.startup = startup
            self.normal = normal
            let line = HostileLine([startup] + normal)
            validLine = line
            self.rows = rows.map { row in
                var row = row
                (row.atLimit.netCPURatio, row.atLimit.netRSSRatio) = line.net(row.atLimit)
                if let read = row.largestRead { (row.largestRead!.netCPURatio, row.largestRead!.netRSSRatio) = line.net(read) }
                return row
            }
            let measures = self.rows.flatMap(\.measures)
            worstCPURatio = measures.map(\.cpuRatio).max() ?? 0
            worstRSSRatio = measures.map(\.rssRatio).max() ?? 0
            worstNetCPURatio = measures.map(\.netCPURatio).max() ?? 0
            worstNetRSSRatio = measures.map(\.netRSSRatio).max() ?? 0
        }

        /// Section 5 of the report, also printed alone by `bench --hostile-only`.
        public func table() -> [String] {
            func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
            func ratio(_ value: Double, _ measure: HostileMeasure) -> String {
                let text = (measure.verdict == "timeout" ? "≥ " : "") + f(value, 1) + "×"
                return value > goalRatio ? "**\(text)**" : text
            }
            func line(_ name: String, _ flow: String, _ measure: HostileMeasure) -> String {
                let outcome = measure.reasons.isEmpty ? measure.verdict : "\(measure.verdict): \(measure.reasons.joined(separator: ", "))"
                return "| \(name) | \(flow) | \(measure.bytes) | \(measure.count) | \(f(measure.cpuMilliseconds, 1)) | \(f(measure.peakRSSMegabytes, 1)) | "
                    + "\(ratio(measure.cpuRatio, measure)) | \(ratio(measure.rssRatio, measure)) | \(ratio(measure.netCPURatio, measure)) | \(ratio(measure.netRSSRatio, measure)) | \(outcome) |"
            }
            func baseline(_ name: String, _ normal: HostileNormal) -> String {
                "| \(name) | \(normal.flow) | \(normal.bytes) | | \(f(normal.cpuMilliseconds, 1)) | \(f(normal.peakRSSMegabytes, 1)) | | | | | \(normal.verdict) |"
            }
            var lines = BenchReport.section("## 5. Hostile input: the largest event of each dimension within \(maxEventBytes) bytes",
                                            about: "Each event verified by `veridoc verify --json` in a child process of its own (CPU and peak RSS from `wait4`, the least of \(runsPerEvent) run\(runsPerEvent == 1 ? "" : "s"), killed after \(f(timeoutSeconds)) s), divided by a valid event's of the same flow and size. \"Net\" divides what the event costs beyond a process's start-up by what a valid event of its size costs beyond it, both from a line fitted through every valid event measured (start-up \(f(validLine.startupCPUMilliseconds, 1)) ms and \(f(validLine.startupRSSMegabytes, 1)) MB, then \(f(validLine.cpuMillisecondsPerMiB, 2)) ms and \(f(validLine.rssMegabytesPerMiB, 2)) MB per MiB), with floors of \(f(Self.cpuFloor)) ms and \(f(Self.rssFloor)) MB on the latter: what verifying costs in a worker, which starts once. Where the verifier refuses the largest event for a budget, \"largest read\" is the largest one it still reads through (the reasons of a small one). Goal: every ratio ≤ \(f(goalRatio))×.",
                                            table: "| dimension | flow | bytes | count | CPU ms | peak RSS MB | CPU ÷ normal | RSS ÷ normal | net CPU ÷ | net RSS ÷ | outcome |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            lines.append(baseline("start-up (smallest valid event)", startup))
            for normal in normal { lines.append(baseline("normal (valid, large portrait)", normal)) }
            for row in rows {
                lines.append(line(row.dimension, row.flow, row.atLimit))
                if let read = row.largestRead { lines.append(line("\(row.dimension), largest read", row.flow, read)) }
            }
            if rows.isEmpty { lines.append("| (skipped) | | | | | | | | | | |") }
            lines.append("| **worst** | | | | | | **\(f(worstCPURatio, 1))×** | **\(f(worstRSSRatio, 1))×** | **\(f(worstNetCPURatio, 1))×** | **\(f(worstNetRSSRatio, 1))×** | goal ≤ \(f(goalRatio))× |")
            return lines
        }

        public func json() throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(self)
        }

        public func markdown(generatedAt: String, machine: Machine) -> String {
            var lines = ["# Veridoc benchmark: hostile input", ""]
            lines.append("Generated \(generatedAt) on \(machine.cores) cores, \(machine.cpuModel), \(machine.memoryMegabytes) MB, \(machine.kernel), \(machine.openSSL).")
            lines.append("")
            lines.append(contentsOf: table())
            return lines.joined(separator: "\n") + "\n"
        }
    }

    public var generatedAt: String
    public var quick: Bool
    public var machine: Machine
    public var ceiling: Ceiling
    public var verifyPool: [PoolRun]
    public var endToEnd: EndToEnd?
    public var scaling: [ScalingRow]
    /// nil when the run skipped it (`--skip-hostile`).
    public var hostile: Hostile?
    /// nil when the run skipped it (`--skip-store`).
    public var store: Store?
    /// nil when the run skipped it (`--skip-api`).
    public var api: API?
    /// nil when the run skipped it (`--skip-status`).
    public var status: Status?
    public var notes: [String]
    /// The product's goals, from the sections above (`BenchReport.targets`).
    public var targets: [Target]

    public init(generatedAt: String, quick: Bool, machine: Machine, ceiling: Ceiling, verifyPool: [PoolRun], endToEnd: EndToEnd?,
                scaling: [ScalingRow], hostile: Hostile? = nil, store: Store? = nil, api: API? = nil, status: Status? = nil, notes: [String]) {
        targets = Self.targets(ceiling: ceiling, verifyPool: verifyPool, endToEnd: endToEnd, api: api) + (status?.targets ?? [])
        self.status = status
        self.generatedAt = generatedAt
        self.quick = quick
        self.machine = machine
        self.ceiling = ceiling
        self.verifyPool = verifyPool
        self.endToEnd = endToEnd
        self.scaling = scaling
        self.hostile = hostile
        self.store = store
        self.api = api
        self.notes = notes
    }

    public static func machine(openSSL: String) -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Machine(cores: ProcessInfo.processInfo.activeProcessorCount, cpuModel: model, openSSL: openSSL,
                       kernel: "Linux \(release)", memoryMegabytes: Int(ProcessInfo.processInfo.physicalMemory / 1_048_576))
    }

    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The same content as a Markdown document (the table printed to stdout is its body).
    public func markdown() -> String {
        var lines: [String] = []
        lines.append("# Veridoc benchmark\(quick ? " (quick smoke run — not a measurement)" : "")")
        lines.append("")
        lines.append("Generated \(generatedAt) on \(machine.cores) cores, \(machine.cpuModel), \(machine.memoryMegabytes) MB, \(machine.kernel), \(machine.openSSL).")
        lines.append("Everything below was measured in one run on this machine; compare ratios, not absolute numbers.")
        lines.append("")
        lines.append(contentsOf: table())
        if !notes.isEmpty {
            lines.append("")
            lines.append("## Notes")
            lines.append("")
            for note in notes { lines.append("- \(note)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A section's start: its heading, what it measured (when the table
    /// needs saying), and its table's header and alignment rows.
    static func section(_ heading: String, about text: String? = nil, table header: String, _ alignment: String) -> [String] {
        [heading, ""] + (text.map { [$0, ""] } ?? []) + [header, alignment]
    }

    public func table() -> [String] {
        var lines = targetsTable() + [""]
        func f(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        func percent(_ value: Double) -> String { String(format: "%.0f %%", 100 * value) }
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "—" }
        // Where the machine's cores went in a run: cores busy = CPU per event × events/s.
        func budget(_ run: EndToEndBench.Run) -> String {
            guard let postgres = run.postgresCPUMillisecondsPerEvent, let harness = run.harnessCPUMillisecondsPerEvent else { return "—" }
            let total = run.cpuMillisecondsPerEvent + postgres + harness
            return "\(f(run.cpuMillisecondsPerEvent, 3)) + \(f(postgres, 3)) + \(f(harness, 3)) = \(f(total, 3)) ms; "
                + "\(f(total * run.eventsPerSecond / 1000, 2)) of \(machine.cores) cores busy"
        }

        lines += Self.section("## 1. Crypto ceiling (in-process primitives)", table: "| primitive | ops/s per core |", "|---|---:|")
        for primitive in ceiling.primitives { lines.append("| \(primitive.name) | \(f(primitive.operationsPerSecond)) |") }
        lines.append("| **ceiling: \(ceiling.perEvent)** | **\(f(ceiling.eventsPerSecondPerCore)) events/s** (\(f(ceiling.cryptoMicrosecondsPerEvent)) µs/event) |")
        lines.append("")
        lines += Self.section("## 2. Verify pool, no I/O",
                              about: "The worker's `VerificationPool` and per-record work (read the CloudEvent, verify, encode the outcome), fed from one thread.",
                              table: "| threads | issuers × tenants | credentials presented again | events | verified | events/s | of ceiling × threads (≤ cores) |", "|---:|---:|---:|---:|---:|---:|---:|")
        for run in verifyPool {
            lines.append("| \(run.threads) | \(run.issuers) × \(run.tenants) | \(percent(run.repeatShare)) | \(run.events) | \(run.verified) | \(f(run.eventsPerSecond)) | \(percent(run.ratioToCeiling)) |")
        }
        lines.append("")
        lines.append("## 3. End to end (broker + PostgreSQL + worker process + outbox)")
        lines.append("")
        if let e2e = endToEnd {
            lines.append("| measure | value | target |")
            lines.append("|---|---:|---:|")
            lines.append("| peak sustained (1 worker × \(e2e.peak.threadsPerWorker) threads, \(e2e.peak.events) events over \(f(e2e.peak.seconds, 1)) s) | \(f(e2e.peak.eventsPerSecond)) events/s | |")
            lines.append("| peak ÷ (ceiling × cores; PostgreSQL, the broker and the load share these cores) | \(percent(e2e.peakRatioToCeilingTimesCores)) | |")
            lines.append("| worker CPU per event at peak | \(f(e2e.peak.cpuMillisecondsPerEvent, 3)) ms (the naive ceiling's crypto is \(percent(e2e.cryptoShareOfWorkerCPU))) | |")
            lines.append("| CPU per event at peak: worker + PostgreSQL + broker, load generator and reader | \(budget(e2e.peak)) | |")
            lines.append("| peak RSS (backlog held at 2,000 events, \(e2e.peak.produced) produced) | \(f(e2e.peak.peakRSSMegabytes)) MB | < 150 MB |")
            lines.append("| latency run: offered \(f(e2e.latency.offeredRate ?? 0)) events/s (50 % of peak) for \(f(e2e.latency.seconds, 1)) s | \(e2e.latency.events) events | |")
            lines.append("| latency p50 / p99 / p99.9 (produce → outcome delivered) | \(ms(e2e.latency.latencyP50Milliseconds)) / \(ms(e2e.latency.latencyP99Milliseconds)) / \(ms(e2e.latency.latencyP999Milliseconds)) ms | p99 < 100 ms |")
            lines.append("| CPU per event at 50 %: worker + PostgreSQL + broker, load generator and reader | \(budget(e2e.latency)) | |")
            lines.append("| steady-state RSS at 50 % | \(f(e2e.latency.peakRSSMegabytes)) MB | < 150 MB |")
            if let backlog = e2e.backlog {
                let whole = backlog.drainSeconds.map { "all of it in \(f($0, 1)) s from the worker's start (\(f(Double(backlog.produced) / max($0, 1e-9))) events/s, start-up and group join included)" } ?? ""
                let measured = backlog.events < backlog.produced ? "between 10 and 90 % of the events stored; " + whole : "too small for a window: " + whole
                lines.append("| backlog: \(backlog.produced) events staged before the worker started, drained at (\(measured)) | \(f(backlog.eventsPerSecond)) events/s = \(percent(backlog.eventsPerSecond / max(e2e.peak.eventsPerSecond, 1e-9))) of peak | |")
                lines.append("| CPU per event draining the backlog: worker + PostgreSQL + broker and reader | \(budget(backlog)) | as at peak |")
                lines.append("| peak RSS while draining the backlog | \(f(backlog.peakRSSMegabytes)) MB | bounded, < 150 MB |")
            }
        } else {
            lines.append("(skipped)")
        }
        lines.append("")
        lines += Self.section("## 4. Scaling: worker processes in one consumer group (\(machine.cores) cores)", table: "| workers × threads | events | events/s | ÷ (ceiling × cores) | CPU ms/event | max RSS MB |", "|---|---:|---:|---:|---:|---:|")
        for row in scaling {
            lines.append("| \(row.run.workers) × \(row.run.threadsPerWorker) | \(row.run.events) | \(f(row.run.eventsPerSecond)) | \(percent(row.ratioToCeilingTimesCores)) | \(f(row.run.cpuMillisecondsPerEvent, 3)) | \(f(row.run.peakRSSMegabytes)) |")
        }
        if scaling.isEmpty { lines.append("| (skipped) | | | | | |") }
        lines.append("")
        // Sections a run may skip: their table, or their heading and "(skipped)".
        let optional: [([String]?, String)] = [(hostile?.table(), "## 5. Hostile input"), (store?.table(), "## 6. Storage"),
                                               (api?.table(), "## 7. Session API"), (status?.table(), "## 8. Revocation (status lists)")]
        for (index, (table, heading)) in optional.enumerated() {
            if index > 0 { lines.append("") }
            lines.append(contentsOf: table ?? [heading, "", "(skipped)"])
        }
        return lines
    }
}
