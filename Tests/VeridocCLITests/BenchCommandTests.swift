import Foundation
import Testing

/// A smoke run of `veridoc-dev bench --quick` (a few hundred events, short runs):
/// it asserts only that the reports are well-formed with every section — never
/// a rate or a latency, which belong to `make bench`, not to a test.
@Suite struct BenchCommandTests {
    /// TestIssuer.HostileDimension's cases, in order (this target runs the binary and links no TestIssuer).
    static let hostileDimensions = [
        "documents", "documentsApp", "documentsWeb", "eventAttributes", "requestedElements", "outcomeElements", "msoUnknownKeys",
        "responseUnknownKeys", "documentUnknownKeys", "issuerSignedUnknownKeys", "namespaces", "elements", "digests", "tag24Items",
        "deviceNamespaces", "x5chain", "detail",
    ]

    static var postgresInstalled: Bool {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.contains { FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/pg_ctl") }
    }

    @Test(.enabled(if: postgresInstalled, "PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are not installed"),
          .timeLimit(.minutes(10)))
    func quickRunWritesWellFormedReports() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A backlog of 200 events is still one (the quick default is 1,000, for a figure worth reading).
        let run = try CLI.dev(["bench", "--quick", "--backlog", "200", "--output", directory.path])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")

        let data = try Data(contentsOf: directory.appendingPathComponent("latest.json"))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let machine = try #require(report["machine"] as? [String: Any])
        #expect((machine["cores"] as? Int ?? 0) >= 1)
        #expect(!(machine["cpuModel"] as? String ?? "").isEmpty)
        #expect((machine["openSSL"] as? String ?? "").contains("OpenSSL"))

        let ceiling = try #require(report["ceiling"] as? [String: Any])
        let primitives = try #require(ceiling["primitives"] as? [[String: Any]])
        #expect(Set(primitives.compactMap { $0["name"] as? String }) == [
            "ECDH P-256", "ECDSA P-256 verify", "ECDSA P-256 verify, fixed-base table", "ECDSA P-256 verify, SignatureVerifierCache hit",
            "P-256 fixed-base table build", "ECDSA P-384 verify", "HPKE open 6 KB",
        ])
        #expect((ceiling["eventsPerSecondPerCore"] as? Double ?? 0) > 0)

        let pool = try #require(report["verifyPool"] as? [[String: Any]])
        #expect(pool.contains { $0["threads"] as? Int == 1 })
        #expect(pool.allSatisfy { ($0["eventsPerSecond"] as? Double ?? 0) > 0 && $0["ratioToCeiling"] is Double })
        #expect(pool.allSatisfy { $0["verified"] as? Int == $0["events"] as? Int }, "the benchmark corpus is valid events")
        #expect(pool.contains { ($0["issuers"] as? Int ?? 0) > 1 && ($0["tenants"] as? Int ?? 0) > 1 }, "a run spread over issuers and tenants")
        #expect(pool.contains { $0["threads"] as? Int == 1 && ($0["repeatShare"] as? Double ?? 0) > 0 }, "a run where credentials are presented again")

        // Every target of a full run, each a measured figure, its goal and whether it was met.
        let targets = try #require(report["targets"] as? [[String: Any]])
        // Eight of the pipeline, two of the HTTP front held by slow clients and one tenant's long polls,
        // three of the waiters held (throughput, answer time, answered once), four of revocation.
        #expect(targets.count == 17, "\(targets.compactMap { $0["name"] as? String })")
        let names = targets.compactMap { $0["name"] as? String }
        #expect(names.contains { $0.hasPrefix("another tenant's POST /v1/sessions p99") } && names.contains { $0.hasPrefix("GET /healthz p99") }, "\(names)")
        #expect(names.contains { $0.hasPrefix("POST /v1/sessions with ") && $0.hasSuffix("held ÷ without") }
                && names.contains { $0.hasPrefix("waiter answered after its session's completion p99") }
                && names.contains { $0.hasPrefix("waiters answered exactly once") }, "\(names)")
        #expect(names.contains { $0.hasPrefix("status check with a cached list") } && names.contains { $0.hasPrefix("fetches for") }, "\(names)")
        let status = try #require(report["status"] as? [String: Any])
        #expect(status["fetchesForWaitingQueries"] as? Int == 1 && status["verifiedWithReference"] as? Int == status["events"] as? Int)
        #expect(names.contains { $0.hasPrefix("status check with two cached CRLs") } && status["verifiedWithCRLs"] as? Int == status["events"] as? Int)
        #expect(targets.allSatisfy { $0["measured"] is Double && $0["met"] is Bool && !($0["goal"] as? String ?? "").isEmpty })

        let endToEnd = try #require(report["endToEnd"] as? [String: Any])
        let peak = try #require(endToEnd["peak"] as? [String: Any])
        let latency = try #require(endToEnd["latency"] as? [String: Any])
        for key in ["eventsPerSecond", "peakRSSMegabytes", "cpuMillisecondsPerEvent"] {
            #expect(peak[key] is Double, "peak.\(key)")
            #expect(latency[key] is Double, "latency.\(key)")
        }
        for key in ["latencyP50Milliseconds", "latencyP99Milliseconds", "latencyP999Milliseconds", "offeredRate"] {
            #expect(latency[key] is Double, "latency.\(key)")
        }
        // The machine's other tenants are measured too: the database server's process tree and the harness.
        for key in ["postgresCPUMillisecondsPerEvent", "harnessCPUMillisecondsPerEvent"] {
            #expect((peak[key] as? Double ?? 0) > 0, "peak.\(key)")
            #expect((latency[key] as? Double ?? 0) > 0, "latency.\(key)")
        }
        #expect(endToEnd["peakRatioToCeilingTimesCores"] is Double)
        // The backlog run: timed whole when it drains before the group is stable
        // (a quick run on a quiet machine), else over its 10-90 % window (a busy
        // machine slows the drain): either way no more events than were produced.
        // That every produced event arrived the bench checks itself (it fails otherwise).
        let backlog = try #require(endToEnd["backlog"] as? [String: Any])
        for key in ["eventsPerSecond", "cpuMillisecondsPerEvent", "drainSeconds"] {
            #expect((backlog[key] as? Double ?? 0) > 0, "backlog.\(key)")
        }
        let produced = try #require(backlog["produced"] as? Int)
        #expect(produced > 0 && (1...produced).contains(backlog["events"] as? Int ?? 0), "backlog: \(backlog)")

        let scaling = try #require(report["scaling"] as? [[String: Any]])
        #expect(scaling.count >= 2)
        #expect(scaling.allSatisfy { $0["run"] is [String: Any] && $0["ratioToCeilingTimesCores"] is Double })

        try Self.checkHostile(try #require(report["hostile"] as? [String: Any]))
        try Self.checkStore(try #require(report["store"] as? [String: Any]))
        try Self.checkAPI(try #require(report["api"] as? [String: Any]))

        let markdown = try String(contentsOf: directory.appendingPathComponent("latest.md"), encoding: .utf8)
        for heading in ["## Targets", "## 1. Crypto ceiling", "## 2. Verify pool", "## 3. End to end", "## 4. Scaling", "## 5. Hostile input", "## 6. Storage", "## 7. Session API"] {
            #expect(markdown.contains(heading), "latest.md: \(heading)")
            #expect(run.stdout.contains(heading), "stdout: \(heading)")
        }
    }

    /// The storage row: the three kinds of batch and both encodings of each
    /// table, every figure positive, the ratios drawn from them.
    /// The session API under wrk: every route answered every request with 2xx, and have rates and latencies.
    static func checkAPI(_ api: [String: Any]) throws {
        let routes = try #require(api["routes"] as? [[String: Any]])
        #expect(routes.compactMap { $0["name"] as? String } == ["GET /healthz", "POST /v1/reader-tokens", "POST /v1/sessions"])
        for route in routes {
            let name = route["name"] as? String ?? "?"
            #expect((route["requests"] as? Int ?? 0) > 0, "api \(name).requests")
            #expect(route["failures"] as? Int == 0, "api \(name): wrk saw non-2xx answers or socket errors")
            for key in ["requestsPerSecond", "requestsPerCoreSecond", "serveCPUSeconds", "latencyP50Milliseconds", "latencyP99Milliseconds"] {
                #expect((route[key] as? Double).map { $0 > 0 && $0.isFinite } == true, "api \(name).\(key)")
            }
        }
        try checkWaiters(try #require(api["waiters"] as? [String: Any]))
    }

    /// The waiters held: POST /v1/sessions measured without and with them,
    /// and every waiter answered its own session's outcome once, timed.
    static func checkWaiters(_ waiters: [String: Any]) throws {
        let polls = try #require(waiters["longPolls"] as? Int), streams = try #require(waiters["eventStreams"] as? Int)
        #expect(polls > 0 && streams > 0, "waiters: \(polls) polls, \(streams) streams")
        for run in ["before", "held", "after"] {
            let route = try #require(waiters[run] as? [String: Any], "waiters.\(run)")
            #expect((route["requests"] as? Int ?? 0) > 0 && route["failures"] as? Int == 0, "waiters.\(run): \(route)")
            #expect((route["requestsPerSecond"] as? Double).map { $0 > 0 && $0.isFinite } == true, "waiters.\(run).requestsPerSecond")
        }
        #expect((waiters["throughputRatio"] as? Double).map { $0 > 0 && $0.isFinite } == true, "waiters.throughputRatio")
        for (kind, held) in [("polls", polls), ("streams", streams)] {
            let answers = try #require(waiters[kind] as? [String: Any], "waiters.\(kind)")
            #expect(answers["held"] as? Int == held && answers["answered"] as? Int == held && answers["repeated"] as? Int == 0, "waiters.\(kind): \(answers)")
            for key in ["p50Milliseconds", "p99Milliseconds", "maxMilliseconds"] {
                #expect((answers[key] as? Double)?.isFinite == true, "waiters.\(kind).\(key)")
            }
        }
        #expect(waiters["answeredOnce"] as? Int == polls + streams && waiters["wrong"] as? Int == 0, "waiters: \(waiters)")
        #expect((waiters["answerP99Milliseconds"] as? Double)?.isFinite == true && (waiters["serveThreads"] as? Int ?? 0) > 0)
    }

    static func checkStore(_ store: [String: Any]) throws {
        let cases = try #require(store["cases"] as? [[String: Any]])
        #expect(Set(cases.map { "\($0["preparedStatements"] as? Bool ?? false) \($0["replaysPerBatch"] as? Int ?? -1)" }) == ["false 0", "true 0", "true 1"])
        for run in cases {
            for key in ["serverMillisecondsPerBatch", "wallMillisecondsPerBatch"] {
                #expect((run[key] as? Double ?? 0) > 0, "store \(run["name"] ?? "?").\(key)")
            }
        }
        let encodings = try #require(store["encodings"] as? [[String: Any]])
        #expect(Set(encodings.map { "\($0["table"] as? String ?? "") \($0["encoding"] as? String ?? "")" })
                == ["elements binary", "elements text literals", "element_values binary", "element_values text literals"])
        #expect(encodings.allSatisfy { ($0["serverSeconds"] as? Double ?? 0) > 0 && ($0["wallSeconds"] as? Double ?? 0) > 0 })
        let ratios = try #require(store["binaryOverText"] as? [String: Double])
        #expect(Set(ratios.keys) == ["elements", "element_values"] && ratios.values.allSatisfy { $0 > 0 && $0.isFinite })
        for key in ["preparedOverUnnamed", "replayOverAllNew"] {
            #expect((store[key] as? Double).map { $0 > 0 && $0.isFinite } == true, "store.\(key)")
        }
    }

    /// The hostile row: one entry per dimension, each with positive figures, against valid events of its flow.
    static func checkHostile(_ hostile: [String: Any]) throws {
        let rows = try #require(hostile["rows"] as? [[String: Any]])
        #expect(rows.compactMap { $0["dimension"] as? String } == Self.hostileDimensions)
        let flows = Set(["apple-wallet-app", "apple-wallet-web", "iso-device-response"])
        for row in rows {
            let name = row["dimension"] as? String ?? "?"
            #expect(flows.contains(row["flow"] as? String ?? ""), "hostile \(name).flow")
            var measures = [try #require(row["atLimit"] as? [String: Any], "hostile \(name).atLimit")]
            if let read = row["largestRead"] as? [String: Any] { measures.append(read) }
            for measure in measures {
                for key in ["bytes", "count"] {
                    #expect((measure[key] as? Int ?? 0) > 0, "hostile \(name).\(key)")
                }
                for key in ["cpuMilliseconds", "peakRSSMegabytes", "cpuRatio", "rssRatio"] {
                    #expect((measure[key] as? Double ?? 0) > 0, "hostile \(name).\(key)")
                }
                // Net of the start-up a ratio can be 0 (an event refused as cheaply as the smallest is read).
                for key in ["netCPURatio", "netRSSRatio"] {
                    #expect((measure[key] as? Double ?? -1) >= 0, "hostile \(name).\(key)")
                }
                #expect(["verified", "rejected", "timeout"].contains(measure["verdict"] as? String ?? ""), "hostile \(name).verdict: \(measure["verdict"] ?? "none")")
                #expect((measure["bytes"] as? Int ?? .max) <= hostile["maxEventBytes"] as? Int ?? 0, "hostile \(name) within the size limit")
            }
        }
        let startup = try #require(hostile["startup"] as? [String: Any])
        #expect(startup["verdict"] as? String == "verified" && (startup["cpuMilliseconds"] as? Double ?? 0) > 0, "the start-up event is valid")
        let normal = try #require(hostile["normal"] as? [[String: Any]])
        #expect(Set(normal.compactMap { $0["flow"] as? String }) == flows)
        #expect(normal.allSatisfy { $0["verdict"] as? String == "verified" && ($0["cpuMilliseconds"] as? Double ?? 0) > 0 && ($0["peakRSSMegabytes"] as? Double ?? 0) > 0 },
                "the baseline events are valid")
        let line = try #require(hostile["validLine"] as? [String: Any])
        for key in ["startupCPUMilliseconds", "startupRSSMegabytes", "cpuMillisecondsPerMiB", "rssMegabytesPerMiB"] {
            #expect((line[key] as? Double ?? -1) >= 0, "hostile.validLine.\(key)")
        }
        for key in ["worstCPURatio", "worstRSSRatio"] {
            #expect((hostile[key] as? Double ?? 0) > 0, "hostile.\(key)")
        }
    }

    @Test("bench --hostile-only writes the hostile row alone", .timeLimit(.minutes(5)))
    func hostileOnlyWritesItsReport() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try CLI.dev(["bench", "--hostile-only", "--quick", "--hostile-bytes", "32768", "--output", directory.path])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        let data = try Data(contentsOf: directory.appendingPathComponent("hostile.json"))
        let hostile = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(hostile["maxEventBytes"] as? Int == 32768)
        try Self.checkHostile(hostile)
        let markdown = try String(contentsOf: directory.appendingPathComponent("hostile.md"), encoding: .utf8)
        #expect(markdown.contains("## 5. Hostile input"))
        #expect(run.stdout.contains("## 5. Hostile input"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("latest.json").path), "a full run's report is left alone")
    }
}
