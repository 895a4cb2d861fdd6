import Foundation
import Pipeline
import Testing
import Verification

/// The worker's librdkafka properties, batching defaults and PostgreSQL
/// settings (no services needed): the prefetch is bounded in bytes, outcomes
/// are not lingered over, batches wait 3 ms for company, statements are
/// prepared unless turned off, and the operator's settings win.
@Suite struct ConsumerPropertiesTests {
    private func configuration(kafka: [String: Any] = [:], worker: [String: Any] = [:], postgres: [String: Any] = [:],
                               environment: [String: String] = [:]) throws -> WorkerConfiguration {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-consumer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("nonce.key").path,
                                           contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(), attributes: [.posixPermissions: 0o600])
        let root: [String: Any] = ["kafka": kafka.merging(["bootstrapServers": "broker-a:9092", "groupId": "verifiers"]) { $1 },
                                   "worker": worker, "postgres": postgres, "replay": ["nonceKeyFile": "nonce.key"]]
        let file = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: root).write(to: file)
        return try WorkerConfiguration.load(from: file, environment: environment)
    }

    @Test func prefetchIsBoundedInBytesPerPoolThread() throws {
        let two = try configuration(worker: ["threads": 2]).consumerProperties
        #expect(two["queued.max.messages.kbytes"] == String(2 * WorkerConfiguration.prefetchKilobytesPerThread))
        let eight = try configuration(worker: ["threads": 8]).consumerProperties
        #expect(eight["queued.max.messages.kbytes"] == String(8 * WorkerConfiguration.prefetchKilobytesPerThread))
        // Not above librdkafka's own 64 MB default even with 8 threads.
        #expect(WorkerConfiguration.prefetchKilobytesPerThread * 8 <= 65536)
        #expect(two["bootstrap.servers"] == "broker-a:9092" && two["group.id"] == "verifiers")
        #expect(two["statistics.interval.ms"] == "5000")
    }

    @Test func preparedStatementsAreOnUnlessTurnedOff() throws {
        #expect(try configuration().postgresPreparedStatements)
        #expect(try !configuration(postgres: ["preparedStatements": false]).postgresPreparedStatements)
        #expect(try configuration(postgres: ["preparedStatements": false], environment: ["VERIDOC_PG_PREPARED": "true"]).postgresPreparedStatements)
        #expect(try !configuration(environment: ["VERIDOC_PG_PREPARED": "FALSE"]).postgresPreparedStatements)
        #expect(throws: ConfigError.self) { try configuration(postgres: ["preparedStatements": 0]) }
        #expect(throws: ConfigError.self) { try configuration(postgres: ["preparedStatements": "no"]) }
        #expect(throws: ConfigError.self) { try configuration(environment: ["VERIDOC_PG_PREPARED": "off"]) }
    }

    @Test func operatorPropertiesWin() throws {
        let file = try configuration(kafka: ["properties": ["queued.max.messages.kbytes": 65536, "fetch.max.bytes": "4194304"]], worker: ["threads": 2])
        #expect(file.consumerProperties["queued.max.messages.kbytes"] == "65536")
        #expect(file.consumerProperties["fetch.max.bytes"] == "4194304")
        let environment = try configuration(kafka: ["properties": ["queued.max.messages.kbytes": 65536]], worker: ["threads": 2],
                                            environment: ["VERIDOC_KAFKA_PROPERTY_QUEUED_MAX_MESSAGES_KBYTES": "2048"])
        #expect(environment.consumerProperties["queued.max.messages.kbytes"] == "2048")
    }

    @Test func producerSendsWithoutLingerAndWithoutConsumerSettings() throws {
        let defaults = try configuration(kafka: ["properties": ["queued.max.messages.kbytes": 8192, "session.timeout.ms": 6000, "sasl.username": "svc"]])
        let producer = defaults.producerProperties
        #expect(producer["linger.ms"] == "0")
        #expect(producer["enable.idempotence"] == "true" && producer["acks"] == "all")
        #expect(producer["bootstrap.servers"] == "broker-a:9092" && producer["sasl.username"] == "svc")
        #expect(producer["queued.max.messages.kbytes"] == nil && producer["session.timeout.ms"] == nil && producer["group.id"] == nil)
        let lingering = try configuration(kafka: ["properties": ["linger.ms": 20]])
        #expect(lingering.producerProperties["linger.ms"] == "20")
    }

    @Test func batchesLingerThreeMillisecondsUnlessConfigured() throws {
        #expect(try configuration().batchLinger == 0.003)
        #expect(try configuration(worker: ["batchLingerMilliseconds": 0]).batchLinger == 0)
        #expect(try configuration(worker: ["batchLingerMilliseconds": 20]).batchLinger == 0.02)
        #expect(try configuration(environment: ["VERIDOC_BATCH_LINGER_MS": "5"]).batchLinger == 0.005)
    }
}
