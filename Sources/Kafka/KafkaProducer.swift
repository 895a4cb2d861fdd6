import CRdKafka
import Foundation

/// An idempotent Kafka producer with delivery reports, backed by one
/// `rd_kafka_t` that this object alone owns and destroys.
///
/// Thread-safety (why `@unchecked Sendable` holds): librdkafka documents
/// `rd_kafka_t` as thread-safe for produce, poll and queue-length calls, so
/// `send` and `flush` may run on any thread concurrently. The only unsafe
/// moment is destruction; every use of the handle passes through `gate`, and
/// `close` destroys the handle only after the gate is shut and drained and the
/// poll thread has been joined.
public final class KafkaProducer: @unchecked Sendable {
    public struct DeliveryReport: Sendable {
        /// The caller's token given to `send`.
        public let token: UInt64
        /// Where the message went; nil when no partition was chosen before failure.
        public let topicPartition: TopicPartition?
        /// The offset it was written at; nil on failure (or if the broker did not say).
        public let offset: Int64?
        /// nil: persisted with the configured acks.
        public let error: KafkaError?
    }

    /// Lives as long as the handle: librdkafka calls back with a raw pointer
    /// to it (conf opaque), so it is retained by the producer, not by C.
    private final class Callbacks: Sendable {
        let onDelivery: @Sendable (DeliveryReport) -> Void
        let onError: (@Sendable (KafkaError) -> Void)?
        init(onDelivery: @escaping @Sendable (DeliveryReport) -> Void, onError: (@Sendable (KafkaError) -> Void)?) {
            self.onDelivery = onDelivery
            self.onError = onError
        }
    }

    private let handle: OpaquePointer
    private let callbacks: Callbacks
    private let gate = HandleGate()
    private let stopPolling = StopFlag()
    private var pollThread: JoinableThread?  // set once in init, joined once in close

    public static let defaultProperties: KafkaProperties = [
        "enable.idempotence": "true",
        "acks": "all",
        "linger.ms": "5",
    ]

    /// Idempotent by default (enable.idempotence=true, acks=all unless
    /// overridden in properties). Starts its own thread that polls for delivery
    /// reports and calls `onDelivery` on that thread. `onError` (optional)
    /// receives non-fatal client errors (broker down, …) on the same thread.
    public init(
        properties: KafkaProperties,
        onDelivery: @escaping @Sendable (DeliveryReport) -> Void,
        onError: (@Sendable (KafkaError) -> Void)? = nil
    ) throws(KafkaError) {
        let callbacks = Callbacks(onDelivery: onDelivery, onError: onError)
        self.callbacks = callbacks
        handle = try KafkaConfiguration.makeHandle(RD_KAFKA_PRODUCER, defaults: Self.defaultProperties, properties: properties) { conf in
            rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbacks).toOpaque())
            rd_kafka_conf_set_dr_msg_cb(conf) { rk, message, opaque in
                guard let rk, let message, let opaque else { return }
                let callbacks = Unmanaged<Callbacks>.fromOpaque(opaque).takeUnretainedValue()
                callbacks.onDelivery(KafkaProducer.report(for: message.pointee, rk))
            }
            // Without a handler librdkafka logs client errors itself (no
            // payloads in them); with one, they go to the handler only.
            guard onError != nil else { return }
            rd_kafka_conf_set_error_cb(conf) { rk, err, reason, opaque in
                guard let rk, let opaque else { return }
                let callbacks = Unmanaged<Callbacks>.fromOpaque(opaque).takeUnretainedValue()
                let error = err == RD_KAFKA_RESP_ERR__FATAL.rawValue
                    ? KafkaError.fatal(of: rk, "producer")
                    : KafkaError(code: err, message: "producer: \(reason.map { String(cString: $0) } ?? "")")
                callbacks.onError?(error)
            }
        }
        let handle = UncheckedHandle(self.handle)
        let stop = stopPolling
        // Delivery reports are served only by this thread (flush waits on the
        // queue length rather than polling), so `onDelivery` has one caller.
        pollThread = JoinableThread(name: "rdk-prod-poll") {
            while !stop.isSet { rd_kafka_poll(handle.pointer, 100) }
        }
    }

    deinit { close(flushTimeoutMilliseconds: 0) }

    private static func report(for message: rd_kafka_message_t, _ rk: OpaquePointer) -> DeliveryReport {
        let token = UInt64(UInt(bitPattern: message._private))
        let topic = message.rkt.map { String(cString: rd_kafka_topic_name($0)) }
        let topicPartition = topic.flatMap { message.partition >= 0 ? TopicPartition($0, message.partition) : nil }
        let place = topicPartition?.description ?? topic ?? "?"
        let error: KafkaError? = switch message.err {
        case RD_KAFKA_RESP_ERR_NO_ERROR: nil
        case RD_KAFKA_RESP_ERR__FATAL: KafkaError.fatal(of: rk, "delivery to \(place)")
        default: KafkaError(message.err, "delivery to \(place)")
        }
        let offset = error == nil && message.offset >= 0 ? message.offset : nil
        return DeliveryReport(token: token, topicPartition: topicPartition, offset: offset, error: error)
    }

    /// Enqueues one message (copying key/value/headers). `token` comes back in
    /// the delivery report. partition nil = partitioner by key. Queue full →
    /// throws a KafkaError with isRetriable true (the caller waits and retries:
    /// backpressure).
    public func send(topic: String, partition: Int32? = nil, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader] = [], token: UInt64) throws(KafkaError) {
        guard gate.enter() else { throw KafkaError.closed("producer") }
        defer { gate.exit() }

        var headerList: OpaquePointer?
        if !headers.isEmpty {
            headerList = rd_kafka_headers_new(headers.count)
            for header in headers {
                let added: rd_kafka_resp_err_t = header.key.withCString { name in
                    guard let value = header.value else { return rd_kafka_header_add(headerList, name, -1, nil, 0) }
                    return value.withUnsafeBytes { rd_kafka_header_add(headerList, name, -1, $0.baseAddress, $0.count) }
                }
                guard added == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    rd_kafka_headers_destroy(headerList)
                    throw KafkaError(added, "adding a header for \(topic)")
                }
            }
        }
        let opaque = UnsafeMutableRawPointer(bitPattern: UInt(token))
        let partition = partition ?? veridoc_rdk_partition_unassigned()
        let result: rd_kafka_resp_err_t = value.withUnsafeBytes { valueBytes in
            // A NULL key pointer means "no key"; an empty key still needs a
            // non-NULL pointer, which an empty Swift array may not provide.
            func produce(_ keyBytes: UnsafeRawBufferPointer?) -> rd_kafka_resp_err_t {
                let keyPointer = keyBytes.map { $0.baseAddress ?? emptyBytes }
                return veridoc_rdk_produce(
                    handle, topic, partition, keyPointer, keyBytes?.count ?? 0,
                    valueBytes.baseAddress, valueBytes.count, headerList, opaque)
            }
            guard let key else { return produce(nil) }
            return key.withUnsafeBytes { produce($0) }
        }
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
            // Not enqueued: the headers are still ours to free.
            if let headerList { rd_kafka_headers_destroy(headerList) }
            let place = partition >= 0 ? TopicPartition(topic, partition).description : topic
            throw KafkaError(result, "enqueue to \(place)")
        }
    }

    /// Waits until every enqueued message is delivered or failed (and its
    /// report handed to `onDelivery`), or the timeout passes
    /// (`_TIMED_OUT`, retriable).
    /// Looks up `topics`' partitions and leaders now, so that the first send
    /// to each does not wait for a metadata round (about a second with
    /// librdkafka's defaults). Returns whether every lookup answered in time;
    /// a failed lookup only means the first send waits as it would have.
    @discardableResult
    public func prepare(topics: [String], timeoutMilliseconds: Int32 = 5_000) -> Bool {
        guard gate.enter() else { return false }
        defer { gate.exit() }
        var answered = true
        for topic in topics {
            guard let handleForTopic = rd_kafka_topic_new(handle, topic, nil) else { answered = false; continue }
            defer { rd_kafka_topic_destroy(handleForTopic) }
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let error = rd_kafka_metadata(handle, 0, handleForTopic, &metadata, Int32(timeoutMilliseconds))
            if let metadata { rd_kafka_metadata_destroy(metadata) }
            if error != RD_KAFKA_RESP_ERR_NO_ERROR { answered = false }
        }
        return answered
    }

    public func flush(timeoutMilliseconds: Int32) throws(KafkaError) {
        guard gate.enter() else { throw KafkaError.closed("producer") }
        defer { gate.exit() }
        try waitForOutstanding(timeoutMilliseconds)
    }

    /// rd_kafka_flush would serve delivery callbacks on the calling thread;
    /// waiting on the out-queue length keeps them on the poll thread.
    private func waitForOutstanding(_ timeoutMilliseconds: Int32) throws(KafkaError) {
        let deadline = DispatchTime.now() + .milliseconds(Int(max(timeoutMilliseconds, 0)))
        while true {
            let outstanding = rd_kafka_outq_len(handle)
            if outstanding == 0 { return }
            if millisecondsLeft(until: deadline) == 0 {
                throw KafkaError(code: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue, message: "flush: \(outstanding) message(s) still outstanding after \(timeoutMilliseconds) ms")
            }
            usleep(1_000)
        }
    }

    /// Messages enqueued but not yet answered by a delivery report, plus
    /// client events not yet served (librdkafka's out-queue length), e.g. for
    /// a backpressure gauge. 0 after close.
    public var outstandingCount: Int {
        guard gate.enter() else { return 0 }
        defer { gate.exit() }
        return Int(rd_kafka_outq_len(handle))
    }

    /// Flushes (bounded), then fails whatever is still queued (the delivery
    /// report says `_PURGE_QUEUE`/`_PURGE_INFLIGHT`, so every token is
    /// answered), stops the poll thread and destroys the handle. Idempotent.
    /// Not from inside `onDelivery` (it would wait for its own thread).
    public func close(flushTimeoutMilliseconds: Int32 = 10_000) {
        guard gate.beginClose() else { return }
        gate.finishClose()
        try? waitForOutstanding(flushTimeoutMilliseconds)
        if rd_kafka_outq_len(handle) > 0 {
            rd_kafka_purge(handle, veridoc_rdk_purge_all())
            try? waitForOutstanding(2_000)
        }
        stopPolling.set()
        pollThread?.join()
        rd_kafka_destroy(handle)
    }
}

/// A stand-in address for zero-length buffers (never read: length is 0).
private nonisolated(unsafe) let emptyBytes = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))

/// Carries a librdkafka handle into a thread closure. Only used for handles
/// whose owner joins that thread before destroying the handle.
struct UncheckedHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// A one-way flag read by a polling loop on another thread.
final class StopFlag: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
