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

        public init(cores: Int, cpuModel: String, openSSL: String, kernel: String, memoryMegabytes: Int) {
            self.cores = cores
            self.cpuModel = cpuModel
            self.openSSL = openSSL
            self.kernel = kernel
            self.memoryMegabytes = memoryMegabytes
        }
    }

    public struct Ceiling: Codable, Sendable {
        public var primitives: [Primitive]
        /// What one benchmark event costs in public-key crypto.
        public var perEvent: String
        public var cryptoMicrosecondsPerEvent: Double
        public var eventsPerSecondPerCore: Double

        public init(primitives: [Primitive], perEvent: String, cryptoMicrosecondsPerEvent: Double, eventsPerSecondPerCore: Double) {
            self.primitives = primitives
            self.perEvent = perEvent
            self.cryptoMicrosecondsPerEvent = cryptoMicrosecondsPerEvent
            self.eventsPerSecondPerCore = eventsPerSecondPerCore
        }
    }

    public struct Primitive: Codable, Sendable {
        public var name: String
        public var operationsPerSecond: Double

        public init(name: String, operationsPerSecond: Double) {
            self.name = name
            self.operationsPerSecond = operationsPerSecond
        }
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

        public init(threads: Int, events: Int, verified: Int, eventsPerSecond: Double, ratioToCeiling: Double, issuers: Int = 1, tenants: Int = 1) {
            self.issuers = issuers
            self.tenants = tenants
            self.threads = threads
            self.events = events
            self.verified = verified
            self.eventsPerSecond = eventsPerSecond
            self.ratioToCeiling = ratioToCeiling
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

        public init(peak: EndToEndBench.Run, peakRatioToCeilingTimesCores: Double, latency: EndToEndBench.Run, cryptoShareOfWorkerCPU: Double,
                    backlog: EndToEndBench.Run? = nil) {
            self.backlog = backlog
            self.peak = peak
            self.peakRatioToCeilingTimesCores = peakRatioToCeilingTimesCores
            self.latency = latency
            self.cryptoShareOfWorkerCPU = cryptoShareOfWorkerCPU
        }
    }

    public struct ScalingRow: Codable, Sendable {
        public var run: EndToEndBench.Run
        public var ratioToCeilingTimesCores: Double

        public init(run: EndToEndBench.Run, ratioToCeilingTimesCores: Double) {
            self.run = run
            self.ratioToCeilingTimesCores = ratioToCeilingTimesCores
        }
    }

    public var generatedAt: String
    public var quick: Bool
    public var machine: Machine
    public var ceiling: Ceiling
    public var verifyPool: [PoolRun]
    public var endToEnd: EndToEnd?
    public var scaling: [ScalingRow]
    public var notes: [String]

    public init(generatedAt: String, quick: Bool, machine: Machine, ceiling: Ceiling, verifyPool: [PoolRun], endToEnd: EndToEnd?,
                scaling: [ScalingRow], notes: [String]) {
        self.generatedAt = generatedAt
        self.quick = quick
        self.machine = machine
        self.ceiling = ceiling
        self.verifyPool = verifyPool
        self.endToEnd = endToEnd
        self.scaling = scaling
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

    public func table() -> [String] {
        var lines: [String] = []
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

        lines.append("## 1. Crypto ceiling (in-process primitives)")
        lines.append("")
        lines.append("| primitive | ops/s per core |")
        lines.append("|---|---:|")
        for primitive in ceiling.primitives { lines.append("| \(primitive.name) | \(f(primitive.operationsPerSecond)) |") }
        lines.append("| **ceiling: \(ceiling.perEvent)** | **\(f(ceiling.eventsPerSecondPerCore)) events/s** (\(f(ceiling.cryptoMicrosecondsPerEvent)) µs/event) |")
        lines.append("")
        lines.append("## 2. Verify pool, no I/O")
        lines.append("")
        lines.append("The worker's `VerificationPool` and per-record work (read the CloudEvent, verify, encode the outcome), fed from one thread.")
        lines.append("")
        lines.append("| threads | issuers × tenants | events | verified | events/s | of ceiling × threads (≤ cores) | target |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for run in verifyPool {
            lines.append("| \(run.threads) | \(run.issuers) × \(run.tenants) | \(run.events) | \(run.verified) | \(f(run.eventsPerSecond)) | \(percent(run.ratioToCeiling)) | ≥ 90 % |")
        }
        lines.append("")
        lines.append("## 3. End to end (broker + PostgreSQL + worker process + outbox)")
        lines.append("")
        if let e2e = endToEnd {
            lines.append("| measure | value | target |")
            lines.append("|---|---:|---:|")
            lines.append("| peak sustained (1 worker × \(e2e.peak.threadsPerWorker) threads, \(e2e.peak.events) events over \(f(e2e.peak.seconds, 1)) s) | \(f(e2e.peak.eventsPerSecond)) events/s | |")
            lines.append("| peak ÷ (ceiling × cores) | \(percent(e2e.peakRatioToCeilingTimesCores)) | ≥ 80 % |")
            lines.append("| worker CPU per event at peak | \(f(e2e.peak.cpuMillisecondsPerEvent, 3)) ms (crypto is \(percent(e2e.cryptoShareOfWorkerCPU))) | |")
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
        lines.append("## 4. Scaling: worker processes in one consumer group (\(machine.cores) cores)")
        lines.append("")
        lines.append("| workers × threads | events | events/s | ÷ (ceiling × cores) | CPU ms/event | max RSS MB |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        for row in scaling {
            lines.append("| \(row.run.workers) × \(row.run.threadsPerWorker) | \(row.run.events) | \(f(row.run.eventsPerSecond)) | \(percent(row.ratioToCeilingTimesCores)) | \(f(row.run.cpuMillisecondsPerEvent, 3)) | \(f(row.run.peakRSSMegabytes)) |")
        }
        if scaling.isEmpty { lines.append("| (skipped) | | | | | |") }
        return lines
    }
}
