import Foundation
import Testing
import DemoKit
import Kafka
import Postgres
import TestIssuer
import Verification
import TestSupport

/// `veridoc-dev dev-broker` as a child process, with its stdin control channel.
/// Unchecked Sendable: the control pipe is used by one thread at a time in these tests.
final class DevBroker: @unchecked Sendable {
    let process = Process()
    let bootstrap: String
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    static let topics = ["veridoc.requests:6", "veridoc.outcomes:6", "veridoc.requests.dlq:6"]

    init(brokers: Int = 3) throws {
        process.executableURL = Binaries.veridocDev
        process.arguments = ["dev-broker", "--brokers", "\(brokers)", "--parent-pid", "\(ProcessInfo.processInfo.processIdentifier)"]
            + Self.topics.flatMap { ["--topic", $0] }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = Self.readLine(output.fileHandleForReading, buffer: &buffer, timeout: 30), line.hasPrefix("BOOTSTRAP=") else {
            process.terminate()
            throw TestFailure("dev-broker printed no BOOTSTRAP line")
        }
        bootstrap = String(line.dropFirst("BOOTSTRAP=".count))
    }

    /// Sends one control command (`down 1`, `up 1`, …) and returns its answer line.
    @discardableResult
    func command(_ line: String) throws -> String {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        guard let answer = Self.readLine(output.fileHandleForReading, buffer: &buffer, timeout: 10) else { throw TestFailure("dev-broker did not answer \(line)") }
        return answer
    }

    private static func readLine(_ handle: FileHandle, buffer: inout Data, timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = buffer.takeLine() { return line }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
        return nil
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// The broker of one test: a `veridoc-dev dev-broker` (librdkafka's mock cluster,
/// the default) or tansu, a Kafka-protocol server of its own
/// (VERIDOC_TEST_BROKER=tansu; `make test` runs the pipeline suite on both).
final class TestBroker: @unchecked Sendable {
    enum Kind: String {
        case mock, tansu
        static let current = Kind(rawValue: ProcessInfo.processInfo.environment["VERIDOC_TEST_BROKER"] ?? "mock") ?? .mock
    }

    static let mockOnly: Comment = "needs the mock broker's control channel or its retention (VERIDOC_TEST_BROKER=mock)"

    let kind: Kind
    let bootstrap: String
    private let dev: DevBroker?
    private let tansu: TansuServer?

    static let repository: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder
    }()

    init(kind: Kind = .current, brokers: Int = 3, log: URL) throws {
        self.kind = kind
        switch kind {
        case .mock:
            let dev = try DevBroker(brokers: brokers)
            self.dev = dev
            tansu = nil
            bootstrap = dev.bootstrap
        case .tansu:
            guard let binary = TansuServer.locate(repository: Self.repository) else {
                throw TestFailure("VERIDOC_TEST_BROKER=tansu but no tansu binary: set VERIDOC_TANSU or run `make setup-tansu`")
            }
            let server = try TansuServer(binary: binary, log: log, topics: DevBroker.topics.map { spec in
                let parts = spec.split(separator: ":")
                return (String(parts[0]), Int32(parts[1])!)
            })
            tansu = server
            dev = nil
            bootstrap = server.bootstrapServers
        }
    }

    /// A control command of the mock (`down 1`, `errors …`); tansu has none.
    @discardableResult
    func command(_ line: String) throws -> String {
        guard let dev else { throw TestFailure("the \(kind) broker takes no control commands") }
        return try dev.command(line)
    }

    /// SIGKILL the broker process and reap it.
    func killNow() {
        if let dev {
            kill(dev.process.processIdentifier, SIGKILL)
            dev.process.waitUntilExit()
        }
        tansu?.killNow()
    }

    /// Group settings that suit the broker: tansu joins a group in about half
    /// of session.timeout.ms (infra.md), the mock in its rebalance delay.
    var groupProperties: [String: String] {
        switch kind {
        case .mock: ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500"]
        // A killed member holds tansu's rebalance until the rebalance timeout
        // (max.poll.interval.ms); see ChaosKafka.tansuGroupProperties.
        case .tansu: ["session.timeout.ms": "2000", "heartbeat.interval.ms": "500", "max.poll.interval.ms": "15000"]
        }
    }
}

/// One `veridoc run` process.
typealias WorkerProcess = VeridocProcess

extension VeridocProcess {
    convenience init(config: URL, name: String, environment: [String: String] = [:]) throws {
        try self.init(command: "run", config: config, name: name, environment: environment)
    }

    /// The port of /metrics, /healthz, /readyz, from the `observability listening` log line.
    func httpPort(timeout: TimeInterval = 30) -> Int? { port(loggedAs: "observability listening", timeout: timeout) }
}

/// A tenant, its config directory and events, wired to one database and broker.
final class PipelineFixture {
    let directory: URL
    let database: TestDatabase
    let broker: TestBroker
    var factory: TestIssuer.EventFactory
    let config: URL
    let verifier: Verifier

    init(groupID: String = "veridoc", batchSize: Int = 200, workerThreads: Int = 2, postgres: String? = nil, brokers: Int = 3,
         tenantID: String? = nil, tenantSettings: [String: Any] = [:], settings: [String: Any] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-pipeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = try TestDatabase(server: postgres)
        broker = try TestBroker(brokers: brokers, log: directory.appendingPathComponent("broker.log"))
        factory = try TestIssuer.EventFactory(now: Date(), seed: UInt64.random(in: 0...UInt64.max))
        if let tenantID { factory.merchant = try TestIssuer.Merchant(tenantID: tenantID) }
        verifier = try factory.verifier()
        let file = try factory.merchant.writeConfiguration(to: directory, trustAnchors: [factory.authority.iaca], tenantSettings: tenantSettings,
                                                           settings: settings)
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        root["kafka"] = [
            "bootstrapServers": broker.bootstrap, "groupId": groupID,
            "properties": broker.groupProperties.merging(["fetch.wait.max.ms": "5"]) { $1 },
        ]
        root["postgres"] = ["connectionString": database.connectionString]
        root["worker"] = ["threads": workerThreads, "batchSize": batchSize, "batchLingerMilliseconds": 20, "drainTimeoutSeconds": 15,
                          "outboxClaimSeconds": 3]
        root["replay"] = ["nonceKeyFile": "nonce.key"]
        // Ephemeral: several workers share this config; each logs the port it got.
        root["observability"] = ["port": 0]
        // Secret key files must not be readable by others (the worker refuses them).
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("nonce.key").path,
                                           contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(), attributes: [.posixPermissions: 0o600])
        try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .withoutEscapingSlashes]).write(to: file)
        config = file
    }

    func startWorker(_ name: String = "worker", environment: [String: String] = [:]) throws -> WorkerProcess {
        try WorkerProcess(config: config, name: name, environment: environment)
    }

    /// Produces `records` (key, value) to the request topic and waits for every delivery.
    func produce(_ records: [(key: String, value: [UInt8])], topic: String = "veridoc.requests", headers: [KafkaHeader] = []) throws {
        let delivered = Counter()
        let producer = try KafkaProducer(properties: ["bootstrap.servers": broker.bootstrap, "linger.ms": "5"]) { report in
            if report.error == nil { delivered.increment() }
        }
        for (index, record) in records.enumerated() {
            try send(producer, topic: topic, key: Array(record.key.utf8), value: record.value, headers: headers, token: UInt64(index))
        }
        try producer.flush(timeoutMilliseconds: 60_000)
        producer.close()
        guard delivered.value == records.count else { throw TestFailure("only \(delivered.value) of \(records.count) records delivered") }
    }

    /// Retries a full local queue, as a producer applying backpressure would.
    private func send(_ producer: KafkaProducer, topic: String, key: [UInt8], value: [UInt8], headers: [KafkaHeader], token: UInt64) throws {
        var attempts = 0
        while true {
            do {
                try producer.send(topic: topic, key: key, value: value, headers: headers, token: token)
                return
            } catch {
                attempts += 1
                if !error.isRetriable || attempts > 6000 { throw error }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Outcome CloudEvents read from the outcome topic: CloudEvent id → subject (request id), until `expected` distinct subjects or the timeout.
    func outcomes(expected: Int, timeout: TimeInterval = 60) throws -> [String: String] {
        var outcomes: [String: String] = [:]
        for event in try outcomeEvents(expected: expected, timeout: timeout) {
            if let id = event["id"] as? String, let subject = event["subject"] as? String { outcomes[id] = subject }
        }
        return outcomes
    }

    /// The outcome CloudEvents themselves, one per CloudEvent id, until `expected` distinct subjects or the timeout.
    func outcomeEvents(expected: Int, timeout: TimeInterval = 60) throws -> [[String: Any]] {
        let listener = NoStoredOffsets()
        let consumer = try KafkaConsumer(properties: [
            "bootstrap.servers": broker.bootstrap, "group.id": "outcome-reader-\(UUID().uuidString)", "auto.offset.reset": "earliest",
            "session.timeout.ms": "6000", "fetch.wait.max.ms": "5",
        ], listener: listener)
        defer { consumer.close() }
        try consumer.subscribe(["veridoc.outcomes"])
        var subjects: Set<String> = []
        var ids: Set<String> = []
        var events: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while subjects.count < expected && Date() < deadline {
            guard let message = try consumer.poll(timeoutMilliseconds: 200) else { continue }
            if let object = try? JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any],
               let id = object["id"] as? String, let subject = object["subject"] as? String {
                subjects.insert(subject)
                if ids.insert(id).inserted { events.append(object) }
            }
        }
        return events
    }

    /// What a stalled group test needs to tell a broker's stall from a
    /// worker's: each worker's assignments and last progress, the stored
    /// rows per partition, and the broker log's tail.
    func groupDiagnosis(_ workers: [WorkerProcess]) throws -> String {
        var lines: [String] = []
        for worker in workers {
            let log = worker.log.components(separatedBy: "\n")
            let group = log.filter { $0.contains("partitions assigned") || $0.contains("partitions revoked") || $0.contains("kafka") }
            lines.append("--- \(worker.logFile.lastPathComponent): \(group.suffix(12).joined(separator: "\n"))\n\(log.last { $0.contains("progress") } ?? "no progress line")")
        }
        let perPartition = try (0..<6).map { "\($0):\(try database.count("SELECT count(*) AS count FROM results WHERE source_partition = \($0)"))" }
        lines.append("--- stored per partition: \(perPartition.joined(separator: " "))")
        let brokerLog = (try? String(contentsOf: directory.appendingPathComponent("broker.log"), encoding: .utf8)) ?? ""
        lines.append("--- \(broker.kind) broker log: \(brokerLog.suffix(3000))")
        return lines.joined(separator: "\n")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}


final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
