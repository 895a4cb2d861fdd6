import CRdKafka
import Foundation

/// A consumer-group member: cooperative-sticky assignment, manual offsets
/// (enable.auto.commit=false, enable.auto.offset.store=false). Not thread-safe except where noted: one thread polls.
///
/// Owns one `rd_kafka_t`. Why `@unchecked Sendable` holds: the object is
/// handed to the thread that polls and may be closed from another; librdkafka
/// makes the handle itself thread-safe, and every use of it goes through
/// `gate`, so `close` destroys it only once no call is inside. `close` and
/// `assignment`, `commit`, `pause`, `resume` and `onError` may be used from
/// any thread; `poll` and `subscribe` from one thread at a time.
public final class KafkaConsumer: @unchecked Sendable {
    /// State reached from librdkafka's C callbacks through the conf opaque.
    /// Retained by the consumer until after the handle is destroyed.
    private final class Callbacks: @unchecked Sendable {
        // `listener` is only used on the polling/closing thread (inside
        // librdkafka callbacks); `onError` and `fatal` are guarded by `lock`.
        var listener: RebalanceListener?
        private let lock = NSLock()
        private var errorHandler: (@Sendable (KafkaError) -> Void)?
        private var statisticsHandler: (@Sendable (KafkaStatistics) -> Void)?
        private var fatal: KafkaError?

        init(listener: RebalanceListener) { self.listener = listener }

        var onError: (@Sendable (KafkaError) -> Void)? {
            get { lock.withLock { errorHandler } }
            set { lock.withLock { errorHandler = newValue } }
        }

        var onStatistics: (@Sendable (KafkaStatistics) -> Void)? {
            get { lock.withLock { statisticsHandler } }
            set { lock.withLock { statisticsHandler = newValue } }
        }

        /// Fatal errors are kept for `poll` to throw; the rest go to `onError`.
        func report(_ error: KafkaError) {
            if error.isFatal {
                lock.withLock { if fatal == nil { fatal = error } }
            } else if let handler = onError {
                handler(error)
            } else {
                // No handler yet: don't swallow it, log it the way librdkafka
                // logs (stderr; codes and places only, never payloads).
                FileHandle.standardError.write(Data("kafka consumer: \(error)\n".utf8))
            }
        }

        var fatalError: KafkaError? { lock.withLock { fatal } }
    }

    private let handle: OpaquePointer
    private let callbacks: Callbacks
    private let gate = HandleGate()

    public static let defaultProperties: KafkaProperties = [
        "partition.assignment.strategy": "cooperative-sticky",
        "enable.auto.commit": "false",
        "enable.auto.offset.store": "false",
        "auto.offset.reset": "earliest",
        "enable.partition.eof": "false",
    ]

    /// `group.id` is required (a `_INVALID_ARG` KafkaError otherwise).
    public init(properties: KafkaProperties, listener: RebalanceListener) throws(KafkaError) {
        guard let group = properties["group.id"], !group.isEmpty else {
            throw KafkaError.invalidArgument("consumer: group.id is required")
        }
        let callbacks = Callbacks(listener: listener)
        self.callbacks = callbacks
        handle = try KafkaConfiguration.makeHandle(RD_KAFKA_CONSUMER, defaults: Self.defaultProperties, properties: properties) { conf in
            rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbacks).toOpaque())
            rd_kafka_conf_set_rebalance_cb(conf) { rk, err, partitions, opaque in
                guard let rk, let opaque else { return }
                let callbacks = Unmanaged<Callbacks>.fromOpaque(opaque).takeUnretainedValue()
                KafkaConsumer.rebalance(rk, err, partitions, callbacks)
            }
            rd_kafka_conf_set_error_cb(conf) { rk, err, reason, opaque in
                guard let rk, let opaque else { return }
                let callbacks = Unmanaged<Callbacks>.fromOpaque(opaque).takeUnretainedValue()
                callbacks.report(err == RD_KAFKA_RESP_ERR__FATAL.rawValue
                    ? KafkaError.fatal(of: rk, "consumer")
                    : KafkaError(code: err, message: "consumer: \(reason.map { String(cString: $0) } ?? "")"))
            }
            // Emitted every `statistics.interval.ms` (0, the default: never);
            // served by `poll`, on the polling thread. Returning 0 lets
            // librdkafka free the JSON.
            rd_kafka_conf_set_stats_cb(conf) { _, json, length, opaque in
                guard let opaque, let json else { return 0 }
                let callbacks = Unmanaged<Callbacks>.fromOpaque(opaque).takeUnretainedValue()
                guard let handler = callbacks.onStatistics else { return 0 }
                let bytes = UnsafeRawBufferPointer(start: json, count: length)
                if let statistics = KafkaStatistics(json: bytes) { handler(statistics) }
                return 0
            }
            rd_kafka_conf_set_offset_commit_cb(conf) { _, err, offsets, opaque in
                guard let opaque else { return }
                let callbacks = Unmanaged<Callbacks>.fromOpaque(opaque).takeUnretainedValue()
                // _NO_OFFSET: nothing to commit, not a failure.
                if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET {
                    callbacks.report(KafkaError(err, "offset commit"))
                    return
                }
                for (partition, offset, partitionError) in TopicPartitionList.elements(of: offsets) where partitionError != RD_KAFKA_RESP_ERR_NO_ERROR {
                    callbacks.report(KafkaError(partitionError, "offset commit \(partition) at \(offset)"))
                }
            }
        }
        // One queue, served by rd_kafka_consumer_poll: rebalance, error and
        // commit callbacks all run on the polling thread.
        let redirected = rd_kafka_poll_set_consumer(handle)
        if redirected != RD_KAFKA_RESP_ERR_NO_ERROR {
            rd_kafka_destroy(handle)
            throw KafkaError(redirected, "consumer: redirecting the main queue")
        }
    }

    deinit { close() }

    /// Optional: called from the polling thread with non-fatal client errors (broker down, …): code + name + text, for logs/metrics.
    public var onError: (@Sendable (KafkaError) -> Void)? {
        get { callbacks.onError }
        set { callbacks.onError = newValue }
    }

    /// Optional: called from the polling thread with librdkafka's statistics,
    /// every `statistics.interval.ms` (set that property to enable them).
    public var onStatistics: (@Sendable (KafkaStatistics) -> Void)? {
        get { callbacks.onStatistics }
        set { callbacks.onStatistics = newValue }
    }

    public func subscribe(_ topics: [String]) throws(KafkaError) {
        guard gate.enter() else { throw KafkaError.closed("consumer") }
        defer { gate.exit() }
        let list = TopicPartitionList(topics.map { TopicPartition($0, veridoc_rdk_partition_unassigned()) })
        let err = rd_kafka_subscribe(handle, list.pointer)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "subscribe to \(topics.joined(separator: ","))") }
    }

    /// Serves rebalance callbacks (calling the listener on this thread) and
    /// returns the next message, or nil on timeout. Partition EOF and transient
    /// broker errors are not thrown (they go to `onError`); fatal errors are
    /// thrown, and so is use after `close` (`_DESTROY`, isFatal).
    public func poll(timeoutMilliseconds: Int32) throws(KafkaError) -> KafkaMessage? {
        guard gate.enter() else { throw KafkaError.closed("consumer") }
        defer { gate.exit() }
        let deadline = DispatchTime.now() + .milliseconds(Int(max(timeoutMilliseconds, 0)))
        repeat {
            if let fatal = callbacks.fatalError { throw fatal }
            guard let message = rd_kafka_consumer_poll(handle, millisecondsLeft(until: deadline)) else { continue }
            defer { rd_kafka_message_destroy(message) }
            let err = message.pointee.err
            switch err {
            case RD_KAFKA_RESP_ERR_NO_ERROR:
                return KafkaMessage(copying: message)
            case RD_KAFKA_RESP_ERR__PARTITION_EOF:
                continue
            case RD_KAFKA_RESP_ERR__FATAL:
                let fatal = KafkaError.fatal(of: handle, "consumer")
                callbacks.report(fatal)
                throw fatal
            default:
                // A consumer error event (its payload field holds librdkafka's
                // error text; for records it holds data, so it is never read
                // here): name the place and the code only.
                let topic = message.pointee.rkt.map { String(cString: rd_kafka_topic_name($0)) }
                let place = topic.map { message.pointee.partition >= 0 ? "\($0)[\(message.pointee.partition)]" : $0 } ?? "consumer"
                callbacks.report(KafkaError(err, place))
            }
        } while millisecondsLeft(until: deadline) > 0
        if let fatal = callbacks.fatalError { throw fatal }
        return nil
    }

    /// Asks `partition`'s leader for its watermarks, for the request's side
    /// effect: it wakes the broker thread that fetches for the partition.
    ///
    /// librdkafka stops fetching a partition whose prefetch queue reached
    /// `queued.max.messages.kbytes` and decides again only on its broker
    /// thread. In the librdkafka this links (2.8) that decision also waits out
    /// `fetch.queue.backoff.ms` (1 s by default) from the moment the queue was
    /// full, which a wake does not shorten. Blocks for one round trip, at
    /// most `timeoutMilliseconds`; returns whether the leader answered.
    @discardableResult
    public func wakeFetcher(for partition: TopicPartition, timeoutMilliseconds: Int32) -> Bool {
        guard gate.enter() else { return false }
        defer { gate.exit() }
        var low: Int64 = 0, high: Int64 = 0
        return rd_kafka_query_watermark_offsets(handle, partition.topic, partition.partition, &low, &high, max(timeoutMilliseconds, 1))
            == RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// The partition's high watermark as its last fetch response reported it
    /// (no request is made); nil before one has.
    public func cachedHighWatermark(_ partition: TopicPartition) -> Int64? {
        cachedWatermarks(partition)?.high
    }

    /// The partition's log start (low) and end (high) offsets as its last
    /// fetch response reported them (no request is made); nil before one has.
    /// A low watermark the broker has not reported is -1.
    public func cachedWatermarks(_ partition: TopicPartition) -> (low: Int64, high: Int64)? {
        guard gate.enter() else { return nil }
        defer { gate.exit() }
        var low: Int64 = 0, high: Int64 = 0
        guard rd_kafka_get_watermark_offsets(handle, partition.topic, partition.partition, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR,
              high >= 0 else { return nil }
        return (low, high)
    }

    /// Stops fetching from these partitions (messages already fetched for them
    /// are discarded by librdkafka); the assignment is kept. Any thread.
    public func pause(_ partitions: [TopicPartition]) {
        changeFlow(partitions, pause: true)
    }

    public func resume(_ partitions: [TopicPartition]) {
        changeFlow(partitions, pause: false)
    }

    private func changeFlow(_ partitions: [TopicPartition], pause: Bool) {
        guard !partitions.isEmpty, gate.enter() else { return }
        defer { gate.exit() }
        let list = TopicPartitionList(partitions)
        let err = pause ? rd_kafka_pause_partitions(handle, list.pointer) : rd_kafka_resume_partitions(handle, list.pointer)
        let verb = pause ? "pause" : "resume"
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { callbacks.report(KafkaError(err, verb)) }
        for (partition, _, partitionError) in TopicPartitionList.elements(of: list.pointer) where partitionError != RD_KAFKA_RESP_ERR_NO_ERROR {
            callbacks.report(KafkaError(partitionError, "\(verb) \(partition)"))
        }
    }

    /// Commits the given next-offsets (for lag monitoring only; the worker's
    /// truth is in PostgreSQL). async by default: failures then reach
    /// `onError` from a later `poll`. Any thread.
    public func commit(_ offsets: [TopicPartition: Int64], asynchronous: Bool = true) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        guard gate.enter() else { throw KafkaError.closed("consumer") }
        defer { gate.exit() }
        let list = TopicPartitionList(offsets.keys, offsets: offsets)
        let err = rd_kafka_commit(handle, list.pointer, asynchronous ? 1 : 0)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(err, "commit \(offsets.keys.map(\.description).sorted().joined(separator: ","))")
        }
        if !asynchronous {
            for (partition, offset, partitionError) in TopicPartitionList.elements(of: list.pointer) where partitionError != RD_KAFKA_RESP_ERR_NO_ERROR {
                throw KafkaError(partitionError, "commit \(partition) at \(offset)")
            }
        }
    }

    /// The partitions currently assigned to this member. Any thread; empty after close.
    public var assignment: [TopicPartition] {
        guard gate.enter() else { return [] }
        defer { gate.exit() }
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return TopicPartitionList.partitions(of: list)
    }

    /// Leaves the group cleanly (the listener sees the final revoke, on the
    /// calling thread, and may still commit from there), destroys the handle.
    /// Idempotent. Any thread, but not from inside a listener callback; waits
    /// for an in-flight `poll` (on another thread) to return.
    public func close() {
        guard gate.beginClose() else { return }
        // The final revoke runs the listener on this thread, and it may still
        // commit or read the assignment: the gate lets this thread in until
        // finishClose.
        let err = rd_kafka_consumer_close(handle)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { callbacks.report(KafkaError(err, "consumer close")) }
        gate.finishClose()
        rd_kafka_destroy(handle)
        // The handle (the only caller of the listener) is gone: drop the
        // reference so a listener that holds this consumer is not kept alive.
        callbacks.listener = nil
    }

    /// The rebalance callback: tells the listener, then applies the change to
    /// librdkafka. Runs on the polling (or closing) thread.
    private static func rebalance(
        _ rk: OpaquePointer, _ err: rd_kafka_resp_err_t,
        _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, _ callbacks: Callbacks
    ) {
        // "COOPERATIVE" → incremental (delta) calls; "EAGER" → full assign/unassign.
        let cooperative = rd_kafka_rebalance_protocol(rk).map { String(cString: $0) } == "COOPERATIVE"
        let changed = TopicPartitionList.partitions(of: partitions)
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            let offsets = callbacks.listener?.partitionsAssigned(changed) ?? [:]
            if let partitions, !offsets.isEmpty, let elements = partitions.pointee.elems {
                for index in 0..<Int(partitions.pointee.cnt) {
                    let element = elements[index]
                    if let offset = offsets[TopicPartition(String(cString: element.topic), element.partition)] {
                        elements[index].offset = offset
                    }
                }
            }
            if cooperative {
                if let error = rd_kafka_incremental_assign(rk, partitions) {
                    callbacks.report(KafkaError(consuming: error, "incremental assign of \(changed.count) partition(s)"))
                }
            } else {
                let assigned = rd_kafka_assign(rk, partitions)
                if assigned != RD_KAFKA_RESP_ERR_NO_ERROR { callbacks.report(KafkaError(assigned, "assign")) }
            }
        default:
            // REVOKE_PARTITIONS, or an error: either way the partitions go.
            // Lost partitions (rd_kafka_assignment_lost) are handled like a
            // revoke: the listener must stop work on them before we return.
            if err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS {
                callbacks.report(KafkaError(err, "rebalance"))
            }
            if rd_kafka_assignment_lost(rk) != 0 {
                callbacks.report(KafkaError(code: err.rawValue, message: "assignment lost: \(changed.count) partition(s) revoked without a clean handover", isRetriable: true))
            }
            callbacks.listener?.partitionsRevoked(changed)
            if cooperative {
                if let partitions, let error = rd_kafka_incremental_unassign(rk, partitions) {
                    callbacks.report(KafkaError(consuming: error, "incremental unassign of \(changed.count) partition(s)"))
                }
            } else {
                let unassigned = rd_kafka_assign(rk, nil)
                if unassigned != RD_KAFKA_RESP_ERR_NO_ERROR { callbacks.report(KafkaError(unassigned, "unassign")) }
            }
        }
    }
}
