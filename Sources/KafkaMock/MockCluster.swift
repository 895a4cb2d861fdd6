import CRdKafka
import Foundation
import Kafka

/// librdkafka's mock cluster (rdkafka_mock.h), for tests, the demo and `veridoc-dev dev-broker`.
///
/// The brokers speak the real Kafka protocol on random 127.0.0.1 ports, so any
/// client (this module, kcat, another process) can use `bootstrapServers`.
/// Limits of librdkafka's mock (2.8): no CreateTopics API (use `createTopic`),
/// unknown topics are auto-created with 4 partitions, the first join of a
/// group waits `group.initial.rebalance.delay.ms` (Kafka's 3 s unless `init`
/// is given another), each partition keeps at most 5 MB or
/// 100,000 records and deletes older ones, and transactions are only emulated
/// loosely.
///
/// Owns the mock cluster and the (otherwise idle) librdkafka handle that hosts
/// it. Why `@unchecked Sendable` holds: the mock API calls hand an operation
/// to the mock cluster's own thread and wait for it, so they are thread-safe;
/// `gate` keeps them from racing `close`, which destroys both handles.
public final class MockCluster: @unchecked Sendable {
    private let host: OpaquePointer
    private let cluster: OpaquePointer
    private let gate = HandleGate()
    public let bootstrapServers: String

    /// Starts `brokers` brokers with IDs 1…brokers. A new group's first
    /// rebalance waits `initialRebalanceDelayMilliseconds` for more members:
    /// Kafka's default, 3,000, would cost every test, demo and chaos run that
    /// much per fresh group; later joins rebalance as usual.
    public init(brokers: Int32, initialRebalanceDelayMilliseconds: Int32 = 250) throws(KafkaError) {
        guard brokers > 0 else { throw KafkaError.invalidArgument("mock cluster: brokers must be positive") }
        // The mock needs an rd_kafka_t to live in; a producer that never
        // connects anywhere (no bootstrap.servers) serves.
        host = try KafkaConfiguration.makeHandle(RD_KAFKA_PRODUCER, defaults: [:], properties: [
            "client.id": "veridoc-mock-cluster",
            // Hides the host's own "no bootstrap.servers" notice (level 5).
            "log_level": "4",
        ])
        guard let cluster = rd_kafka_mock_cluster_new(host, brokers) else {
            rd_kafka_destroy(host)
            throw KafkaError(code: RD_KAFKA_RESP_ERR__FAIL.rawValue, message: "mock cluster: cannot start \(brokers) broker(s)")
        }
        self.cluster = cluster
        rd_kafka_mock_group_initial_rebalance_delay_ms(cluster, initialRebalanceDelayMilliseconds)
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    deinit { close() }

    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) throws(KafkaError) {
        try call("create topic \(name) (\(partitions) partitions)") { rd_kafka_mock_topic_create($0, name, partitions, replicationFactor) }
    }

    public func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try call("broker \(brokerID) down") { rd_kafka_mock_broker_set_down($0, brokerID) }
    }

    public func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try call("broker \(brokerID) up") { rd_kafka_mock_broker_set_up($0, brokerID) }
    }

    /// The next `errors.count` requests with this API key (0 Produce, 1 Fetch,
    /// 8 OffsetCommit, …) fail with these error codes, in order, on any broker.
    public func pushRequestErrors(apiKey: Int16, errors: [Int32]) {
        guard !errors.isEmpty, gate.enter() else { return }
        defer { gate.exit() }
        let codes = errors.map { rd_kafka_resp_err_t(rawValue: $0) }
        codes.withUnsafeBufferPointer { rd_kafka_mock_push_request_errors_array(cluster, apiKey, codes.count, $0.baseAddress) }
    }

    /// Shuts the brokers down. Clients still connected see transport errors.
    /// Idempotent.
    public func close() {
        guard gate.beginClose() else { return }
        gate.finishClose()
        rd_kafka_mock_cluster_destroy(cluster)
        rd_kafka_destroy(host)
    }

    private func call(_ what: String, _ body: (OpaquePointer) -> rd_kafka_resp_err_t) throws(KafkaError) {
        guard gate.enter() else { throw KafkaError.closed("mock cluster") }
        defer { gate.exit() }
        let err = body(cluster)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "mock cluster: \(what)") }
    }
}
