import CRdKafka

/// An error from librdkafka (or from this wrapper, using librdkafka's own
/// local error codes), carrying the numeric `rd_kafka_resp_err_t` code and its
/// symbolic name so logs and metrics can name it without parsing text.
///
/// The message text names topics, partitions, offsets and codes only — never
/// message keys or payloads, which may carry personal data.
public struct KafkaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `rd_kafka_resp_err_t` value (negative: client-local, positive: broker).
    public let code: Int32
    /// librdkafka's name for the code, e.g. `_QUEUE_FULL` or `NOT_LEADER_FOR_PARTITION`.
    public let name: String
    public let message: String
    /// The client instance is unusable (e.g. an idempotent producer fenced or
    /// sequence-desynchronised): recreate it.
    public var isFatal: Bool
    /// Trying the same operation again later may succeed (queue full, broker
    /// temporarily unreachable, leader moving, …).
    public var isRetriable: Bool
    /// Set when librdkafka refused the configuration (a property, or the
    /// client built from them): a sentence for the operator, naming the
    /// property where librdkafka does.
    public var configurationProblem: String?

    public init(code: Int32, message: String, isFatal: Bool = false, isRetriable: Bool? = nil) {
        self.code = code
        self.name = Self.name(of: code)
        self.message = message
        self.isFatal = isFatal || code == RD_KAFKA_RESP_ERR__FATAL.rawValue
        self.isRetriable = isRetriable ?? Self.isRetriable(code: code)
    }

    package init(_ err: rd_kafka_resp_err_t, _ context: String) {
        self.init(code: err.rawValue, message: "\(context): \(Self.text(of: err.rawValue))")
    }

    /// Takes over (and destroys) an `rd_kafka_error_t`: its own fatal/retriable
    /// flags are authoritative, so they are used instead of the code table.
    init(consuming error: OpaquePointer, _ context: String) {
        defer { rd_kafka_error_destroy(error) }
        let code = rd_kafka_error_code(error).rawValue
        let text = rd_kafka_error_string(error).map { String(cString: $0) } ?? Self.text(of: code)
        self.init(
            code: code, message: "\(context): \(text)",
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            isRetriable: rd_kafka_error_is_retriable(error) != 0 || Self.isRetriable(code: code))
    }

    /// After librdkafka reported `_FATAL`, the underlying error is fetched
    /// with `rd_kafka_fatal_error` so the caller sees the real cause.
    static func fatal(of handle: OpaquePointer, _ context: String) -> KafkaError {
        var buffer = [CChar](repeating: 0, count: 512)
        let underlying = rd_kafka_fatal_error(handle, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let code = underlying == RD_KAFKA_RESP_ERR_NO_ERROR ? RD_KAFKA_RESP_ERR__FATAL.rawValue : underlying.rawValue
        return KafkaError(code: code, message: "\(context): fatal: \(text)", isFatal: true, isRetriable: false)
    }

    public var description: String { "KafkaError(\(name) [\(code)]\(isFatal ? ", fatal" : "")\(isRetriable ? ", retriable" : ""): \(message))" }

    static func name(of code: Int32) -> String {
        String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: code)))
    }

    static func text(of code: Int32) -> String {
        String(cString: rd_kafka_err2str(rd_kafka_resp_err_t(rawValue: code)))
    }

    /// librdkafka only classifies `rd_kafka_error_t` objects; plain response
    /// codes (delivery reports, produce, commit) are classified here after the
    /// Kafka protocol's RetriableException list and librdkafka's transient
    /// local errors.
    static func isRetriable(code: Int32) -> Bool {
        retriableCodes.contains(code)
    }

    private static let retriableCodes: Set<Int32> = Set([
        RD_KAFKA_RESP_ERR__QUEUE_FULL, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__RESOLVE,
        RD_KAFKA_RESP_ERR__WAIT_COORD, RD_KAFKA_RESP_ERR__IN_PROGRESS, RD_KAFKA_RESP_ERR__RETRY,
        RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE, RD_KAFKA_RESP_ERR__NODE_UPDATE,
        RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
        RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS,
        RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR, RD_KAFKA_RESP_ERR_FETCH_SESSION_ID_NOT_FOUND,
        RD_KAFKA_RESP_ERR_INVALID_FETCH_SESSION_EPOCH, RD_KAFKA_RESP_ERR_LISTENER_NOT_FOUND,
        RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH, RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH,
        RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_PREFERRED_LEADER_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS,
        RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED,
    ].map(\.rawValue))

    // Errors raised by this wrapper itself, reusing librdkafka's local codes.
    package static func closed(_ what: String) -> KafkaError {
        KafkaError(code: RD_KAFKA_RESP_ERR__DESTROY.rawValue, message: "\(what) is closed", isFatal: true, isRetriable: false)
    }

    package static func invalidArgument(_ text: String) -> KafkaError {
        KafkaError(code: RD_KAFKA_RESP_ERR__INVALID_ARG.rawValue, message: text, isFatal: false, isRetriable: false)
    }
}
