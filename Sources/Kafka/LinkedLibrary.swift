import CRdKafka

/// The librdkafka this process runs with.
public enum RdKafkaLibrary {
    public static var version: String { "librdkafka " + String(cString: rd_kafka_version_str()) }
}
