import Crypto
import DemoKit
import Foundation
import JSON
import KafkaMock
import SessionAPI
import TestIssuer
import Verification

/// Section 7: `veridoc serve` under `wrk` (Debian's HTTP load tool) on
/// loopback, one route at a time: requests a second, what they cost the serve
/// process in CPU (so a rate per core that does not depend on how many cores
/// the load tool took), and wrk's latency percentiles. `GET /healthz` is the
/// HTTP layer alone, so that its rate beside a route's says what the route's
/// own work costs. Sessions go to a PostgreSQL of the bench's own; the
/// producer's broker is a mock cluster in this process (no route measured
/// here produces). Then the HTTP front held (`FrontLoad`) and the waiters
/// held (`WaitersBench`), each on a serve of its own.
public struct APIBench {
    struct Failure: Error, CustomStringConvertible { let description: String }

    public struct Options: Sendable {
        public var seconds: Int
        public var connections: Int
        /// The HTTP front held: slow clients, one tenant's long polls, and the other tenant's requests measured meanwhile (0 slow clients: left out).
        public var slowClients = 1_000
        public var longPolls = 1_000
        public var frontRequests: Int
        /// Long polls and event streams held while POST /v1/sessions is measured, then answered (0 of both: left out).
        public var heldPolls = 5_000
        public var heldStreams = 1_000
        public static let quick = Options(seconds: 1, connections: 8, frontRequests: 40, heldPolls: 20, heldStreams: 10)
        /// 300 pairs, one every 50 ms: 15 s, longer than serve's header deadline, so slow clients are cut off and come back meanwhile.
        public static let full = Options(seconds: 10, connections: 32, frontRequests: 300)
    }

    let binary: String
    let options: Options
    let progress: (String) -> Void

    public init(binary: String, options: Options, progress: @escaping (String) -> Void) {
        self.binary = binary
        self.options = options
        self.progress = progress
    }

    /// The load tool, or nil when it is not installed (`make bench` installs it).
    public static var wrk: URL? {
        ["/usr/bin/wrk", "/usr/local/bin/wrk"].map(URL.init(fileURLWithPath:)).first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    static let merchantID = "merchant.dev.veridoc.bench"
    /// What every `POST /v1/sessions` of the section sends: the app flow, one element.
    static let sessionBody = #"{"flow":"apple-wallet-app","merchantId":"\#(merchantID)","requestedElements":[{"namespace":"org.iso.18013.5.1","element":"age_over_21","retention":{"intent":"willNotStore"}}]}"#

    public func run() throws -> BenchReport.API {
        guard let wrk = Self.wrk else { throw Failure(description: "wrk not found: `make bench` installs it (apt-get install wrk)") }
        let directory = URL(fileURLWithPath: "/tmp/veridoc-api-bench-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        progress("starting PostgreSQL and a mock broker for serve …")
        let postgres = try EmbeddedPostgres(directory: directory.appendingPathComponent("pg"))
        defer { postgres.stop() }
        let cluster = try MockCluster(brokers: 1)
        defer { cluster.close() }
        try cluster.createTopic("veridoc.requests", partitions: 1)
        let apiKey = "vdk_" + Base64.encodeURL(secureRandomBytes(32))
        let nonceKey = directory.appendingPathComponent("nonce.key")
        guard FileManager.default.createFile(atPath: nonceKey.path, contents: Data(Base64.encodeStandard(secureRandomBytes(32)).utf8),
                                             attributes: [.posixPermissions: 0o600]) else { throw Failure(description: "cannot write \(nonceKey.path)") }
        // serve loads its tenants as the worker does, trust included, though it verifies nothing.
        try TestIssuer.PEM.certificates([try TestIssuer.Authority(now: Date()).iaca])
            .write(to: directory.appendingPathComponent("iaca.pem"), atomically: true, encoding: .utf8)
        let keyFile = directory.appendingPathComponent("reader-token-key.pem")
        guard FileManager.default.createFile(atPath: keyFile.path, contents: Data(try PrivateKey.generate(curve: .p256).pkcs8PEM().utf8),
                                             attributes: [.posixPermissions: 0o600]) else { throw Failure(description: "cannot write \(keyFile.path)") }
        let config: [String: Any] = [
            "tenants": [["id": "bench", "trustAnchors": ["iaca.pem"], "apiKeys": [APIKeyring.setting(forKey: apiKey)],
                         "merchantIds": [Self.merchantID], "teamId": "BENCHTEAM1",
                         "readerTokens": ["brandId": "BENCHBRAND", "keyId": "BENCHKEYID", "signingKey": keyFile.lastPathComponent]]],
            "postgres": ["connectionString": postgres.connectionString],
            "kafka": ["bootstrapServers": cluster.bootstrapServers],
            "replay": ["nonceKeyFile": nonceKey.lastPathComponent],
            // The rate limit is not what is measured.
            "serve": ["port": 0, "loopbackOnly": true, "maxConnections": options.connections * 4,
                      "requestsPerSecondPerKey": 1_000_000, "burstPerKey": 10_000_000],
        ]
        let (serve, _, port) = try Self.startServe(binary: binary, config: config, directory: directory, prefix: "")
        defer { Self.stop(serve) }

        let script = try Self.wrkScript(directory: directory, name: "reader-token.lua", body: #"{"readerInstanceIdentifier":"bench-reader-0001"}"#, apiKey: apiKey)
        let sessions = try Self.wrkScript(directory: directory, name: "sessions.lua", body: Self.sessionBody, apiKey: apiKey)
        var routes: [BenchReport.APIRoute] = []
        let plan: [(String, String, URL?)] = [
            ("GET /healthz", "/healthz", nil), ("POST /v1/reader-tokens", "/v1/reader-tokens", script), ("POST /v1/sessions", "/v1/sessions", sessions),
        ]
        for (name, path, lua) in plan {
            progress("wrk \(name), \(options.connections) connections, \(options.seconds) s …")
            routes.append(try Self.runWrk(wrk, serve: serve, port: port, name: name, path: path, script: lua, options: options))
        }
        Self.stop(serve)
        var front: BenchReport.HTTPFront?
        if options.slowClients > 0 || options.longPolls > 0 {
            front = try heldFront(directory: directory, postgres: postgres.connectionString, kafka: cluster.bootstrapServers,
                                  signingKey: keyFile.lastPathComponent, nonceKey: nonceKey.lastPathComponent)
        }
        var waiters: BenchReport.HeldWaiters?
        if options.heldPolls > 0 || options.heldStreams > 0 {
            waiters = try WaitersBench(binary: binary, options: options, wrk: wrk, progress: progress)
                .run(directory: directory, postgres: postgres.connectionString, kafka: cluster.bootstrapServers,
                     signingKey: keyFile.lastPathComponent, nonceKey: nonceKey.lastPathComponent)
        }
        return BenchReport.API(seconds: options.seconds, connections: options.connections, routes: routes, front: front, waiters: waiters)
    }

    /// A wrk script that POSTs `body` as JSON with `apiKey`.
    static func wrkScript(directory: URL, name: String, body: String, apiKey: String) throws -> URL {
        let script = directory.appendingPathComponent(name)
        try Data("""
            wrk.method = "POST"
            wrk.body = '\(body)'
            wrk.headers["Content-Type"] = "application/json"
            wrk.headers["Authorization"] = "Bearer \(apiKey)"
            """.utf8).write(to: script)
        return script
    }

    /// One wrk run against `path` (`script` sets method, body and headers), with what it cost serve's CPU.
    static func runWrk(_ wrk: URL, serve: Process, port: Int, name: String, path: String, script: URL?, options: Options) throws -> BenchReport.APIRoute {
        let before = ProcessCPU.seconds(pid: serve.processIdentifier)
        var arguments = ["-t1", "-c\(options.connections)", "-d\(options.seconds)s", "--latency"]
        if let script { arguments += ["-s", script.path] }
        let output = try capture(wrk, arguments + ["http://127.0.0.1:\(port)\(path)"])
        let cpu = ProcessCPU.seconds(pid: serve.processIdentifier) - before
        var route = try WrkOutput.parse(output)
        route.name = name
        route.serveCPUSeconds = cpu
        route.requestsPerCoreSecond = cpu > 0 ? Double(route.requests) / cpu : .nan
        return route
    }

    /// A tenant of the section's serve runs, its requests signed with the run's key files.
    static func tenant(_ id: String, _ key: String, signingKey: String) -> [String: Any] {
        ["id": id, "trustAnchors": ["iaca.pem"], "apiKeys": [APIKeyring.setting(forKey: key)], "merchantIds": [merchantID], "teamId": "BENCHTEAM1",
         "readerTokens": ["brandId": "BENCHBRAND", "keyId": "BENCHKEYID", "signingKey": signingKey]]
    }

    /// A gauge of serve's /metrics, nil when it cannot be read.
    static func gauge(_ name: String, port: Int) -> Double? {
        guard let text = try? LoopbackHTTP.request("GET", "/metrics", port: port).body else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// The nearest-rank percentile `p` of `values` (NaN for none).
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
    }

    /// serve's default for `serve.maxWaitingPollsPerTenant`, the cap the front run holds the long polls to.
    static let waitingPollsPerTenant = 32

    /// The HTTP front held (`FrontLoad`), on a serve of its own with two tenants.
    func heldFront(directory: URL, postgres: String, kafka: String, signingKey: String, nonceKey: String) throws -> BenchReport.HTTPFront {
        let attackerKey = "vdk_" + Base64.encodeURL(secureRandomBytes(32))
        let otherKey = "vdk_" + Base64.encodeURL(secureRandomBytes(32))
        // Both ends of every held connection need a descriptor: this process's and serve's (which inherits the limit).
        let fitted = fittedToOpenFiles(options.longPolls, options.slowClients)
        let (longPolls, slowClients) = (fitted.first, fitted.second)
        if fitted.scaled {
            progress("HTTP front: the open-file limit is \(fitted.files) (ulimit -Hn): \(slowClients) slow clients and \(longPolls) long polls instead")
        }
        let held = slowClients + longPolls
        let config: [String: Any] = [
            "tenants": [Self.tenant("attacker", attackerKey, signingKey: signingKey), Self.tenant("other", otherKey, signingKey: signingKey)],
            "postgres": ["connectionString": postgres], "kafka": ["bootstrapServers": kafka], "replay": ["nonceKeyFile": nonceKey],
            // Room for every held connection, and one address standing for many; every other limit is serve's default.
            "serve": ["port": 0, "loopbackOnly": true, "maxConnections": held + 600, "maxConnectionsPerAddress": held + 600,
                      "maxWaitingPollsPerTenant": Self.waitingPollsPerTenant],
        ]
        let (serve, log, port) = try Self.startServe(binary: binary, config: config, directory: directory, prefix: "front-")
        defer { Self.stop(serve) }
        let metricsPort = try Self.listeningPort(log: log, process: serve, message: "observability listening")
        func create(_ key: String) throws -> LoopbackHTTP.Answer {
            try LoopbackHTTP.request("POST", "/v1/sessions", port: port, headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")], body: Self.sessionBody)
        }
        let created = try create(attackerKey)
        guard created.status == 201, let object = try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any],
              let id = object["id"] as? String else { throw Failure(description: "the attacker's session was not created: \(created.status)") }

        progress("HTTP front: \(slowClients) slow clients and \(longPolls) long polls of one tenant held …")
        let load = FrontLoad(port: port, slowClients: slowClients, longPolls: longPolls, sessionPath: "/v1/sessions/\(id)", apiKey: attackerKey)
        let thread = load.start()
        defer {
            load.stop()
            while !thread.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        }
        // Held: the tenant's polls wait up to its cap, and the slow clients have been sending for a few seconds.
        let settled = Date().addingTimeInterval(60)
        func waiting() -> Double? { Self.gauge("veridoc_api_long_polls_waiting", port: metricsPort) }
        let settledWaiting = Double(min(longPolls, Self.waitingPollsPerTenant))
        while waiting() != settledWaiting || (longPolls > Self.waitingPollsPerTenant && load.counts.lock.withLock({ load.counts.tooMany }) == 0) {
            guard Date() < settled, serve.isRunning else {
                let counts = load.counts.lock.withLock { (load.counts.reconnects, load.counts.tooMany, load.counts.answered) }
                throw Failure(description: "the long polls did not settle at the cap within 60 s: \(waiting().map { "\($0)" } ?? "no metrics") waiting; attackers: \(counts.0) reconnects, \(counts.1) answered 429, \(counts.2) otherwise; serve: \(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(600))")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        Thread.sleep(forTimeInterval: 3)
        let before = load.counts.lock.withLock { (load.counts.reconnects, load.counts.tooMany, load.counts.answered) }
        let cpuBefore = ProcessCPU.seconds(pid: serve.processIdentifier)
        var sessions: [Double] = []
        var health: [Double] = []
        var failures = 0
        var firstFailure: String?
        for round in 0..<options.frontRequests {
            if round > 0 { Thread.sleep(forTimeInterval: 0.05) }
            do {
                let answer = try create(otherKey)
                if answer.status == 201 { sessions.append(answer.milliseconds) } else { failures += 1; firstFailure = firstFailure ?? "POST /v1/sessions: \(answer.status)" }
            } catch { failures += 1; firstFailure = firstFailure ?? "POST /v1/sessions: \(error)" }
            do {
                let answer = try LoopbackHTTP.request("GET", "/healthz", port: port)
                if answer.status == 200 { health.append(answer.milliseconds) } else { failures += 1; firstFailure = firstFailure ?? "GET /healthz: \(answer.status)" }
            } catch { failures += 1; firstFailure = firstFailure ?? "GET /healthz: \(error)" }
        }
        if let firstFailure { progress("  first failure: \(firstFailure); serve's log ends: \(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(800))") }
        let cpu = ProcessCPU.seconds(pid: serve.processIdentifier) - cpuBefore
        let after = load.counts.lock.withLock { (load.counts.reconnects, load.counts.tooMany, load.counts.answered) }
        let percentile = Self.percentile
        progress("  another tenant's sessions p99 \(String(format: "%.1f", percentile(sessions, 0.99))) ms, /healthz p99 \(String(format: "%.1f", percentile(health, 0.99))) ms, \(failures) failures")
        return BenchReport.HTTPFront(
            slowClients: slowClients, longPolls: longPolls, waitingPollsPerTenant: Self.waitingPollsPerTenant, requests: options.frontRequests,
            sessionP50Milliseconds: percentile(sessions, 0.5), sessionP99Milliseconds: percentile(sessions, 0.99), sessionMaxMilliseconds: sessions.max() ?? .nan,
            healthP50Milliseconds: percentile(health, 0.5), healthP99Milliseconds: percentile(health, 0.99), healthMaxMilliseconds: health.max() ?? .nan,
            failures: failures, attackerReconnects: after.0 - before.0, attackerRefusals: after.1 - before.1, attackerAnswers: after.2 - before.2,
            serveCPUSeconds: cpu)
    }

    /// `veridoc serve` on `config` (written to `directory/<prefix>config.json`)
    /// with its metrics on a free port, its standard error in `<prefix>serve.log`,
    /// once it listens: the session API's port. Info lines carry the ports: the
    /// config's warning level is for the run, the start lines are read first.
    /// A serve that does not come up is stopped before the error is thrown.
    static func startServe(binary: String, config: [String: Any], directory: URL, prefix: String) throws -> (process: Process, log: URL, port: Int) {
        var config = config
        config["observability"] = ["port": 0, "logLevel": "warning"]
        let configFile = directory.appendingPathComponent("\(prefix)config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configFile)
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: binary)
        serve.arguments = ["serve", "--config", configFile.path]
        let log = directory.appendingPathComponent("\(prefix)serve.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        serve.standardError = try FileHandle(forWritingTo: log)
        serve.standardOutput = FileHandle.nullDevice
        serve.environment = ProcessInfo.processInfo.environment.merging(["VERIDOC_LOG_LEVEL": "info"]) { $1 }
        try serve.run()
        do {
            return (serve, log, try listeningPort(log: log, process: serve))
        } catch {
            stop(serve)
            throw error
        }
    }

    static func stop(_ serve: Process) {
        if serve.isRunning { serve.terminate() }
        serve.waitUntilExit()
    }

    static func listeningPort(log: URL, process: Process, message: String = "session API listening") throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") where line.contains(message) {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                   let port = (object["port"] as? String).flatMap(Int.init) { return port }
            }
            guard process.isRunning else { throw Failure(description: "veridoc serve exited: \(text.suffix(500))") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Failure(description: "veridoc serve did not start listening within 30 s")
    }

    static func capture(_ executable: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw Failure(description: "\(executable.lastPathComponent) failed: \(text.suffix(500))") }
        return text
    }
}

/// What `wrk --latency` prints, read into a row.
enum WrkOutput {
    static func parse(_ text: String) throws -> BenchReport.APIRoute {
        var requests: Int?
        var rate: Double?
        var percentiles: [String: Double] = [:]
        var failures = 0
        for raw in text.split(separator: "\n") {
            let fields = raw.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let first = fields.first else { continue }
            if fields.count >= 3, fields[1] == "requests", fields[2] == "in", let count = Int(first) {
                requests = count
            } else if first == "Requests/sec:", fields.count == 2 {
                rate = Double(fields[1])
            } else if ["50%", "75%", "90%", "99%"].contains(first), fields.count == 2, let value = milliseconds(fields[1]) {
                percentiles[first] = value
            } else if raw.contains("Non-2xx or 3xx responses:"), let count = fields.last.flatMap(Int.init) {
                failures += count
            } else if first == "Socket", raw.contains("errors:") {
                // "Socket errors: connect 0, read 0, write 0, timeout 0"
                failures += fields.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }.reduce(0, +)
            }
        }
        guard let requests, let rate, let p50 = percentiles["50%"], let p99 = percentiles["99%"] else {
            throw APIBench.Failure(description: "wrk output without requests, rate or latency: \(text.suffix(400))")
        }
        return BenchReport.APIRoute(name: "", requests: requests, requestsPerSecond: rate, failures: failures,
                                    latencyP50Milliseconds: p50, latencyP99Milliseconds: p99, serveCPUSeconds: 0, requestsPerCoreSecond: 0)
    }

    /// "512.00us", "2.10ms", "1.02s" in milliseconds.
    static func milliseconds(_ text: String) -> Double? {
        for (unit, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }
}
