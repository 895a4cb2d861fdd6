import CommandLineSupport
import Crypto
import DemoKit
import Benchmarks
import Foundation
import Pipeline
import TestIssuer
import Verification

/// `veridoc-dev bench [--quick] [--events N] [--seconds S] [--duration D] [--threads T] [--backlog N] [--output DIR] [--skip-e2e] [--skip-scaling]
/// [--skip-hostile] [--skip-store] [--skip-api] [--hostile-bytes B] [--hostile-runs R] [--hostile-timeout S] [--hostile-keep DIR]`:
/// the measurements of `make bench` — crypto ceiling, verification pool, end
/// to end (worker processes, broker, PostgreSQL), scaling, hostile input and
/// what the persister's statements cost PostgreSQL —
/// printed as a table and written to DIR/latest.json and DIR/latest.md.
///
/// `veridoc-dev bench --hostile-only [--quick] [--hostile-bytes B …] [--output DIR]`: the hostile-input
/// row alone, written to DIR/hostile.json and DIR/hostile.md (a full run's latest.* stay as they were).
/// `--hostile-keep DIR` leaves the row's events, their tenant and a `veridoc verify` line for each in DIR.
///
/// `veridoc-dev bench --profile-verify N [--issuers I --tenants T]`: generates N
/// events (from I issuers for T tenants), then only verifies them on one
/// thread (for callgrind/perf, so profiles are not about generation).
enum BenchCommand {
    /// One section run alone: its table, then each target and whether it was met.
    static func printSection(_ table: [String], _ targets: [BenchReport.Target], format: String) {
        print("")
        for line in table { print(line) }
        for target in targets {
            print("target: \(target.name): \(String(format: format, target.measured)) \(target.unit), goal \(target.goal), \(target.met ? "met" : "NOT met")")
        }
    }

    static func run(_ arguments: [String]) -> Int32 {
        // The hostile row's measuring helper (see HostileBench.measureChild); not for people.
        if arguments.first == "--measure-child" {
            guard let product = try? Binaries.product() else { return 2 }
            return HostileBench.measureChild(Array(arguments.dropFirst()), binary: product.path)
        }
        return ExitStatus.returning(usage: Usage.text, failure: "bench failed") {
            let parsed = try ParsedArguments(arguments, options: ["--events", "--seconds", "--threads", "--duration", "--output", "--profile-verify", "--backlog", "--issuers", "--tenants",
                                                                  "--hostile-bytes", "--hostile-runs", "--hostile-timeout", "--hostile-keep"],
                                             flags: ["--quick", "--skip-e2e", "--skip-scaling", "--skip-hostile", "--skip-store", "--skip-api", "--skip-status", "--hostile-only", "--api-only", "--status-only"])
            Interruption.installHandlers()
            if let profile = parsed.options["--profile-verify"] {
                guard let count = Int(profile), count > 0 else { throw UsageError("--profile-verify needs a number of events") }
                let issuers = Int(parsed.options["--issuers"] ?? "1") ?? 0
                let tenants = Int(parsed.options["--tenants"] ?? "1") ?? 0
                guard issuers > 0, tenants > 0 else { throw UsageError("--issuers and --tenants need positive numbers") }
                return try profileVerify(count: count, issuers: issuers, tenants: tenants)
            }
            let quick = parsed.flags.contains("--quick")
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let count = Int(parsed.options["--events"] ?? "") ?? (quick ? 200 : 3000)
            let seconds = Double(parsed.options["--seconds"] ?? "") ?? (quick ? 0.2 : 1)
            let threads = Int(parsed.options["--threads"] ?? "") ?? cores
            let duration = Double(parsed.options["--duration"] ?? "") ?? (quick ? 2 : 30)
            let output = URL(fileURLWithPath: parsed.options["--output"] ?? "bench/results")
            let log: @Sendable (String) -> Void = { Console.progress($0) }

            var notes: [String] = []
            let machine = BenchReport.machine(openSSL: openSSLVersionText)
            print("Machine: \(machine.cores) cores · \(machine.cpuModel) · \(machine.openSSL)")

            // 5. Hostile input, one child process per event. Quick runs smaller
            // events once each: enough to show the row works, not to measure it.
            var hostileOptions = HostileBench.Options(
                maxEventBytes: Int(parsed.options["--hostile-bytes"] ?? "") ?? (quick ? 128 << 10 : EventParser().maxEventBytes),
                runs: Int(parsed.options["--hostile-runs"] ?? "") ?? (quick ? 1 : 5),
                timeoutSeconds: Double(parsed.options["--hostile-timeout"] ?? "") ?? (quick ? 30 : 60))
            hostileOptions.keepDirectory = parsed.options["--hostile-keep"].map { URL(fileURLWithPath: $0) }
            guard hostileOptions.maxEventBytes > 0, hostileOptions.runs > 0, hostileOptions.timeoutSeconds > 0 else {
                throw UsageError("--hostile-bytes, --hostile-runs and --hostile-timeout need positive numbers")
            }
            func hostile() throws -> BenchReport.Hostile {
                let directory = URL(fileURLWithPath: "/tmp/veridoc-hostile-\(UUID().uuidString.prefix(8).lowercased())")
                let result = try HostileBench.run(product: try Binaries.product().path, tooling: Binaries.tooling.path, options: hostileOptions, directory: directory, progress: log)
                log("")
                return result
            }
            if parsed.flags.contains("--api-only") {
                // Section 7 alone (wrk and the HTTP front held), printed; the report files are the whole run's.
                let api = try APIBench(binary: try Binaries.product().path, options: quick ? .quick : .full, progress: log).run()
                printSection(api.table(), api.targets, format: "%.2f")
                return 0
            }
            if parsed.flags.contains("--status-only") {
                // Section 8 alone, printed; the report files are the whole run's.
                let status = try StatusBench(options: quick ? .quick : .full, progress: log).run()
                printSection(status.table(), status.targets, format: "%.3f")
                return 0
            }
            if parsed.flags.contains("--hostile-only") {
                let result = try hostile()
                let generatedAt = ISO8601DateFormatter().string(from: Date())
                try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
                try result.json().write(to: output.appendingPathComponent("hostile.json"))
                try Data(result.markdown(generatedAt: generatedAt, machine: machine).utf8).write(to: output.appendingPathComponent("hostile.md"))
                print("")
                for line in result.table() { print(line) }
                print("")
                print("Written: \(output.appendingPathComponent("hostile.json").path), \(output.appendingPathComponent("hostile.md").path)")
                return 0
            }

            // 1 and 2. The ceiling and the pool, measured in interleaved rounds,
            // each keeping its best: on a shared machine a neighbour's burst would
            // otherwise land on one side of the ratio only.
            let rounds = quick ? 1 : 3
            log("generating \(count) events for the verify pool …")
            let (events, verifier) = try Benchmark.corpus(count: count)
            _ = PoolBenchmark.run(records: Array(events.prefix(100)), verifier: verifier, threads: 1)
            // Half of the people come again with the credential they showed before.
            let repeatShare = 0.5
            log("generating \(count) events, \(Int(repeatShare * 100)) % of them a credential presented again …")
            let (repeatEvents, repeatVerifier) = try Benchmark.corpus(count: count, seed: 8, repeatShare: repeatShare)
            var bestRepeat: PoolBenchmark.Run?
            // The memo of verified signatures is the process's: every pool run starts
            // with it empty, or a round would find the rounds before it remembered.
            func poolRun(_ records: [(key: [UInt8]?, value: [UInt8])], _ verifier: Verifier, threads: Int) -> PoolBenchmark.Run {
                TrustedSignatures.shared.memo.reset(capacity: VerifiedSignatureMemo.defaultCapacity)
                return PoolBenchmark.run(records: records, verifier: verifier, threads: threads)
            }
            // The same work spread over many issuers and tenants: cost per event must not grow with them.
            let (spreadIssuers, spreadTenants) = quick ? (4, 8) : (64, 256)
            log("generating \(count) events from \(spreadIssuers) issuers for \(spreadTenants) tenants …")
            let (spreadEvents, spreadVerifier) = try Benchmark.corpus(count: count, issuers: spreadIssuers, tenants: spreadTenants)
            var bestSpread: PoolBenchmark.Run?
            let poolThreadCounts = Array(Set([1, threads])).sorted()
            var rates: [String: Double] = [:]
            var primitiveOrder: [String] = []
            var bestPool: [Int: PoolBenchmark.Run] = [:]
            for round in 1...rounds {
                log("round \(round) of \(rounds): primitives …")
                for primitive in try Benchmark.primitives(seconds: seconds / Double(rounds)) {
                    if rates[primitive.name] == nil { primitiveOrder.append(primitive.name) }
                    rates[primitive.name] = max(rates[primitive.name] ?? 0, primitive.operationsPerSecond)
                }
                for poolThreads in poolThreadCounts {
                    log("round \(round) of \(rounds): verify pool, \(poolThreads) thread(s) …")
                    let run = poolRun(events, verifier, threads: poolThreads)
                    if run.eventsPerSecond > bestPool[poolThreads]?.eventsPerSecond ?? 0 { bestPool[poolThreads] = run }
                }
                log("round \(round) of \(rounds): verify pool, 1 thread, \(spreadIssuers) issuers × \(spreadTenants) tenants …")
                let spread = poolRun(spreadEvents, spreadVerifier, threads: 1)
                if spread.eventsPerSecond > bestSpread?.eventsPerSecond ?? 0 { bestSpread = spread }
                log("round \(round) of \(rounds): verify pool, 1 thread, \(Int(repeatShare * 100)) % presented again …")
                let repeated = poolRun(repeatEvents, repeatVerifier, threads: 1)
                if repeated.eventsPerSecond > bestRepeat?.eventsPerSecond ?? 0 { bestRepeat = repeated }
            }
            let ceiling = BenchReport.Ceiling(rates: rates, order: primitiveOrder)
            let ecdhOnly = 1 / (1 / rates["ECDH P-256"]! + 2 / rates["ECDSA P-256 verify"]!)
            notes.append(String(format: "With HPKE open at the cost of a bare ECDH the ceiling would be %.0f events/s per core; HPKE open measures %.0f %% of ECDH.",
                                ecdhOnly, 100 * rates["HPKE open 6 KB"]! / rates["ECDH P-256"]!))
            if rounds > 1 {
                notes.append("Ceiling and verify pool: best of \(rounds) interleaved rounds each (the machine is shared; a neighbour's burst would otherwise fall on one side of the ratio).")
            }
            var pool: [BenchReport.PoolRun] = []
            for poolThreads in poolThreadCounts {
                let run = bestPool[poolThreads]!
                pool.append(BenchReport.PoolRun(threads: poolThreads, events: events.count, verified: run.verified, eventsPerSecond: run.eventsPerSecond,
                                                ceiling: ceiling, cores: cores))
            }
            if let repeated = bestRepeat {
                pool.insert(BenchReport.PoolRun(threads: 1, events: repeatEvents.count, verified: repeated.verified, eventsPerSecond: repeated.eventsPerSecond,
                                                ceiling: ceiling, cores: cores, repeatShare: repeatShare),
                            at: 1)
            }
            if let spread = bestSpread, let single = bestPool[1] {
                pool.insert(BenchReport.PoolRun(threads: 1, events: spreadEvents.count, verified: spread.verified, eventsPerSecond: spread.eventsPerSecond,
                                                ceiling: ceiling, cores: cores, issuers: spreadIssuers, tenants: spreadTenants),
                            at: 1)
                notes.append(String(format: "Spread over %d issuers and %d tenants, one pool thread runs at %.0f %% of its rate with one issuer and one tenant (the chain and certificate caches are per document signer).",
                                    spreadIssuers, spreadTenants, 100 * spread.eventsPerSecond / single.eventsPerSecond))
            }
            log("")

            // 3 and 4. End to end and scaling, with worker processes.
            var endToEnd: BenchReport.EndToEnd?
            var scaling: [BenchReport.ScalingRow] = []
            if !parsed.flags.contains("--skip-e2e") {
                let poolRate = pool.last!.eventsPerSecond
                // Quick: enough that the peak's 10–90 % window spans several of
                // /proc's 10 ms ticks of PostgreSQL's CPU (a few hundred events span
                // only a handful).
                let corpusSize = quick ? 800 : max(5000, Int(poolRate * duration * 1.25))
                log("generating \(corpusSize) events for the end-to-end runs …")
                let generated = Date()
                let factory = try TestIssuer.EventFactory(now: Date(), seed: 2027)
                let corpus = try EndToEndBench.corpus(factory: factory, count: corpusSize, threads: cores, seed: 2027)
                notes.append(String(format: "End-to-end corpus: %d valid Apple in-app events (%.1f KB on average), generated in %.1f s; each run uses a fresh broker and database (fsync and synchronous_commit on; wal_init_zero off, because a new database would otherwise zero-fill a 16 MB WAL segment inside a commit every ~1,300 events, which a server in service recycles instead).",
                                    corpus.count, Double(corpus.reduce(0) { $0 + $1.value.count }) / Double(corpus.count) / 1024, Date().timeIntervalSince(generated)))
                let directory = URL(fileURLWithPath: "/tmp/veridoc-bench-\(UUID().uuidString.prefix(8).lowercased())")
                let removeDirectory = Interruption.register { try? FileManager.default.removeItem(at: directory) }
                defer { Interruption.unregister(removeDirectory) }
                log("starting PostgreSQL …")
                let postgres = try EmbeddedPostgres(directory: directory.appendingPathComponent("pg"))
                defer { postgres.stop() }
                let bench = EndToEndBench(corpus: corpus, factory: factory, binary: try Binaries.product().path, postgres: postgres,
                                          directory: directory.appendingPathComponent("runs"), progress: log)
                defer { try? FileManager.default.removeItem(at: directory) }

                let peak = try bench.throughput(workers: 1, threadsPerWorker: cores)
                let rate = max(1, peak.eventsPerSecond / 2)
                let latency = try bench.latency(rate: rate, seconds: duration, workers: 1, threadsPerWorker: cores)
                let backlogEvents = Int(parsed.options["--backlog"] ?? "") ?? (quick ? 1000 : 100_000)
                var backlog: EndToEndBench.Run?
                if backlogEvents > 0 {
                    backlog = try bench.backlog(events: backlogEvents, threadsPerWorker: cores)
                    if backlogEvents > corpus.count {
                        notes.append("Backlog: the \(corpus.count)-event corpus repeated with fresh event ids up to \(backlogEvents) events; the repeats are read and verified like the rest and then rejected by the nonce check (request.nonce_reused).")
                    }
                }
                endToEnd = BenchReport.EndToEnd(peak: peak, latency: latency, backlog: backlog, ceiling: ceiling, cores: cores)
                if !parsed.flags.contains("--skip-scaling") {
                    scaling.append(BenchReport.ScalingRow(run: peak, ceiling: ceiling, cores: cores))
                    let scalingEvents = quick ? corpus.count : min(corpus.count, Int(poolRate * 20))
                    for workers in quick ? [2] : [2, 4] {
                        let run = try bench.throughput(workers: workers, threadsPerWorker: cores, events: scalingEvents)
                        scaling.append(BenchReport.ScalingRow(run: run, ceiling: ceiling, cores: cores))
                    }
                    notes.append("Scaling runs every worker process with the default worker.threads (= \(cores) cores), all on this one \(cores)-core machine next to the broker, PostgreSQL and the load generator: more processes share the same cores.")
                }
                log("")
            }
            // 6. Storage, on a database of its own.
            var storeRow: BenchReport.Store?
            if !parsed.flags.contains("--skip-store") {
                let directory = URL(fileURLWithPath: "/tmp/veridoc-store-\(UUID().uuidString.prefix(8).lowercased())")
                log("starting PostgreSQL for the storage row …")
                let postgres = try EmbeddedPostgres(directory: directory)
                defer { postgres.stop() }
                storeRow = try StoreBench(postgres: postgres, options: quick ? .quick : .full, progress: log).run()
                log("")
            }
            // 7. The session API, its own process under wrk.
            var apiRow: BenchReport.API?
            if !parsed.flags.contains("--skip-api") {
                apiRow = try APIBench(binary: try Binaries.product().path, options: quick ? .quick : .full, progress: log).run()
                log("")
            }
            // 8. Revocation, in this process.
            var statusRow: BenchReport.Status?
            if !parsed.flags.contains("--skip-status") {
                statusRow = try StatusBench(options: quick ? .quick : .full, progress: log).run()
                log("")
            }
            // 5. Hostile input, last: its child processes run alone on the machine.
            let hostileRow = parsed.flags.contains("--skip-hostile") ? nil : try hostile()

            notes.append("Latency run: librdkafka's mock broker answers a fetch with one message set per partition (its Fetch handler writes a single set and leaves more to a to-do), and at half of peak, producers sending with linger.ms 0, a message set is mostly one record; so every consumer (the worker's, the outcome reader) makes about one fetch per record, and the mock broker finds each fetch offset by walking the partition's retained sets from the oldest. The worker's and the harness's CPU per event there are higher than Apache Kafka would make them.")
            notes.append("Peak: the corpus produced as fast as the worker takes it, with a backlog of 2,000 events kept ahead of the outcomes (librdkafka's mock broker trims each partition to a few MB, so a large backlog is staged only in the separate backlog run, spread over more partitions); the rate is measured between the 10th and the 90th percent of outcomes read back from the outcome topic. CPU per event is the worker processes' user + system time in that window.")

            let formatter = ISO8601DateFormatter()
            let report = BenchReport(generatedAt: formatter.string(from: Date()), quick: quick, machine: machine, ceiling: ceiling,
                                     verifyPool: pool, endToEnd: endToEnd, scaling: scaling, hostile: hostileRow, store: storeRow, api: apiRow,
                                     status: statusRow, notes: notes)
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            try report.json().write(to: output.appendingPathComponent("latest.json"))
            try Data(report.markdown().utf8).write(to: output.appendingPathComponent("latest.md"))
            print("")
            for line in report.table() { print(line) }
            print("")
            print("Written: \(output.appendingPathComponent("latest.json").path), \(output.appendingPathComponent("latest.md").path)")
            return 0
        }
    }

    /// Generate, then verify only: the part a profiler should look at.
    private static func profileVerify(count: Int, issuers: Int, tenants: Int) throws -> Int32 {
        let (events, verifier) = issuers == 1 && tenants == 1
            ? try Benchmark.corpus(count: count)
            : try Benchmark.corpus(count: count, issuers: issuers, tenants: tenants)
        let run = PoolBenchmark.run(records: events, verifier: verifier, threads: 1)
        print(String(format: "verified %d of %d events, %.0f events/s", run.verified, events.count, run.eventsPerSecond))
        let tables = TrustedSignatures.shared.tables.statistics, memo = TrustedSignatures.shared.memo.statistics
        print("fixed-base tables: \(tables.tables) (\(tables.builds) built); signature memo: \(memo.hits) hits, \(memo.misses) misses")
        return 0
    }

}
