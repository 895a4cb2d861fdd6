import CRdKafka
import Foundation

/// One record header. Kafka allows a header without a value (null), which is
/// different from an empty value.
public struct KafkaHeader: Sendable, Equatable {
    public let key: String
    public let value: [UInt8]?

    public init(_ key: String, _ value: [UInt8]?) {
        self.key = key
        self.value = value
    }
}

/// A consumed record, copied out of librdkafka's buffers so it can outlive the
/// `rd_kafka_message_t` and cross threads.
///
/// Deliberately not CustomStringConvertible beyond the default: key and value
/// may carry personal data, so only `topicPartition` and `offset` belong in logs.
public struct KafkaMessage: Sendable {
    public let topicPartition: TopicPartition
    public let offset: Int64
    public let key: [UInt8]?
    public let value: [UInt8]
    public let headers: [KafkaHeader]
    /// The record's create or log-append time, if the broker supplied one.
    public let timestamp: Date?

    public init(topicPartition: TopicPartition, offset: Int64, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader] = [], timestamp: Date? = nil) {
        self.topicPartition = topicPartition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// Copies a successfully fetched message (err == NO_ERROR). The caller
    /// still owns and destroys `message`.
    init(copying message: UnsafeMutablePointer<rd_kafka_message_t>) {
        let m = message.pointee
        let topic = m.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        topicPartition = TopicPartition(topic, m.partition)
        offset = m.offset
        key = m.key.map { Array(UnsafeRawBufferPointer(start: $0, count: m.key_len)) }
        value = m.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: m.len)) } ?? []

        var headers: [KafkaHeader] = []
        var list: OpaquePointer?
        if rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
            var index = 0
            var name: UnsafePointer<CChar>?
            var bytes: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(list, index, &name, &bytes, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                let headerName = name.map { String(cString: $0) } ?? ""
                headers.append(KafkaHeader(headerName, bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }))
                index += 1
            }
        }
        self.headers = headers

        var kind = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(message, &kind)
        timestamp = kind == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || milliseconds < 0
            ? nil : Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
