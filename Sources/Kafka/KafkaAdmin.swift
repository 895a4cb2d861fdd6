import CRdKafka
import Foundation

/// Topic administration over the Kafka protocol (CreateTopics), for brokers
/// that are separate servers: tansu in the tests and `veridoc-dev chaos`, a real
/// cluster in development. librdkafka's mock cluster has no CreateTopics; it
/// takes topics from `MockCluster.createTopic`.
///
/// Owns one `rd_kafka_t` (a producer handle, which the admin API runs on) and
/// one result queue; both are destroyed by `close` or deinit. Not thread-safe:
/// one thread at a time.
public final class KafkaAdmin {
    private let handle: OpaquePointer
    private let queue: OpaquePointer

    public init(properties: KafkaProperties) throws(KafkaError) {
        handle = try KafkaConfiguration.makeHandle(RD_KAFKA_PRODUCER, defaults: [:], properties: properties)
        guard let queue = rd_kafka_queue_new(handle) else {
            rd_kafka_destroy(handle)
            throw KafkaError(code: RD_KAFKA_RESP_ERR__FAIL.rawValue, message: "admin: cannot create a result queue")
        }
        self.queue = queue
    }

    private var closed = false

    public func close() {
        guard !closed else { return }
        closed = true
        rd_kafka_queue_destroy(queue)
        rd_kafka_destroy(handle)
    }

    deinit { close() }

    /// Creates each topic with `partitions` partitions; one that exists already
    /// is not an error. Waits up to `timeoutMilliseconds` for the broker.
    public func createTopics(_ names: [String], partitions: Int32, replicationFactor: Int32 = 1, timeoutMilliseconds: Int32 = 10_000) throws(KafkaError) {
        guard !names.isEmpty else { return }
        guard !closed else { throw KafkaError.closed("admin") }
        var errorText = [CChar](repeating: 0, count: 512)
        var topics: [OpaquePointer?] = []
        defer { for topic in topics { rd_kafka_NewTopic_destroy(topic) } }
        for name in names {
            guard let topic = rd_kafka_NewTopic_new(name, partitions, replicationFactor, &errorText, errorText.count) else {
                throw KafkaError.invalidArgument("admin: topic \(name): \(KafkaConfiguration.text(errorText))")
            }
            topics.append(topic)
        }
        guard let options = rd_kafka_AdminOptions_new(handle, RD_KAFKA_ADMIN_OP_CREATETOPICS) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__FAIL.rawValue, message: "admin: cannot create options")
        }
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
        topics.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_CreateTopics(handle, buffer.baseAddress, buffer.count, options, queue)
        }
        // The one result event, or nothing within the timeout (plus a margin for the request itself).
        guard let event = rd_kafka_queue_poll(queue, timeoutMilliseconds + 2_000) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue, message: "admin: no CreateTopics answer within \(timeoutMilliseconds) ms", isRetriable: true)
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        guard eventError == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(eventError, "admin: CreateTopics")
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__FAIL.rawValue, message: "admin: not a CreateTopics result")
        }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return }
        for index in 0..<count {
            let topicResult = results[index]
            let error = rd_kafka_topic_result_error(topicResult)
            if error == RD_KAFKA_RESP_ERR_NO_ERROR || error == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS { continue }
            let name = rd_kafka_topic_result_name(topicResult).map { String(cString: $0) } ?? "?"
            throw KafkaError(error, "admin: create topic \(name)")
        }
    }
}
