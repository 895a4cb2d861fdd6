import Foundation
import Kafka
import Synchronization

/// Produces the request events serve builds, one at a time per caller: a
/// submit answers 202 only once the broker has acknowledged its event
/// (idempotent producer, acks=all), so an accepted response is never only
/// in this process's memory.
final class RequestProducer: Sendable {
    private let producer: KafkaProducer
    private let topic: String
    /// Delivery waiters by token: the poll thread answers, the request thread waits.
    private let waiters = Waiters()
    private let nextToken = Atomic<UInt64>(1)
    let deliveryTimeout: TimeInterval

    private final class Waiters: Sendable {
        private let byToken = Mutex<[UInt64: Waiter]>([:])
        func add(_ waiter: Waiter, _ token: UInt64) { byToken.withLock { $0[token] = waiter } }
        func take(_ token: UInt64) -> Waiter? { byToken.withLock { $0.removeValue(forKey: token) } }
    }

    private final class Waiter: Sendable {
        let done = DispatchSemaphore(value: 0)
        let failed = Atomic<Bool>(false)
    }

    init(bootstrapServers: String, properties: KafkaProperties, topic: String, deliveryTimeout: TimeInterval = 10) throws(KafkaError) {
        self.topic = topic
        let waiters = self.waiters
        var all = properties
        all["bootstrap.servers"] = bootstrapServers
        all["client.id"] = all["client.id"] ?? "veridoc-serve"
        // A message that cannot be delivered in time fails, and its submit
        // with it; a submit waits as long as librdkafka may take to say so
        // (the operator's message.timeout.ms where set), so a 503 never hides
        // a delivery still under way.
        let timeout = all["message.timeout.ms"].flatMap(Double.init).map { $0 / 1000 } ?? deliveryTimeout
        all["message.timeout.ms"] = String(Int(timeout * 1000))
        self.deliveryTimeout = timeout
        producer = try KafkaProducer(properties: all, onDelivery: { report in
            guard let waiter = waiters.take(report.token) else { return }
            waiter.failed.store(report.error != nil, ordering: .relaxed)
            waiter.done.signal()
        }, onError: { _ in })
    }

    /// Sends `value` under `key` and waits for the broker's acknowledgement.
    func deliver(key: [UInt8], value: [UInt8]) throws(SessionError) {
        let token = nextToken.add(1, ordering: .relaxed).newValue
        let waiter = Waiter()
        waiters.add(waiter, token)
        do {
            try producer.send(topic: topic, key: key, value: value, token: token)
        } catch {
            _ = waiters.take(token)
            throw .unavailable(.broker)
        }
        // The message timeout bounds the report; a little more for its arrival.
        guard waiter.done.wait(timeout: .now() + deliveryTimeout + 2) == .success else {
            _ = waiters.take(token)
            throw .unavailable(.broker)
        }
        if waiter.failed.load(ordering: .relaxed) { throw .unavailable(.broker) }
    }

    /// Whether the broker answers a metadata request for the topic now.
    func isReady(timeoutMilliseconds: Int32) -> Bool {
        producer.prepare(topics: [topic], timeoutMilliseconds: timeoutMilliseconds)
    }

    func close() { producer.close(flushTimeoutMilliseconds: 5_000) }
}
