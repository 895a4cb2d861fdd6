import Foundation
import Kafka
import KafkaMock
import Testing

/// Broker failures injected through the mock cluster's fault API.
@Suite struct FaultTests {
    @Test(.timeLimit(.minutes(3)))
    func messagesSentWhileABrokerIsDownAreDeliveredOnceItIsBack() throws {
        let cluster = try MockCluster.with(brokers: 3, topic: "outage", partitions: 3, replicationFactor: 3)
        defer { cluster.close() }
        // Warm up: metadata known, producer id assigned.
        #expect(try produce(cluster, topic: "outage", count: 3).allSatisfy { $0.error == nil })

        let log = DeliveryLog()
        let errors = Locked<[KafkaError]>([])
        let producer = try KafkaProducer(
            properties: producerProperties(cluster), onDelivery: log.callback,
            onError: { error in errors.withValue { $0.append(error) } })
        defer { producer.close() }
        try producer.flush(timeoutMilliseconds: 1)  // nothing yet: returns at once
        try cluster.setBrokerDown(1)
        for index in 0..<300 {
            try producer.send(topic: "outage", key: bytes("key-\(index)"), value: bytes("value-\(index)"), token: UInt64(index))
        }
        Thread.sleep(forTimeInterval: 1.5)
        try cluster.setBrokerUp(1)
        try producer.flush(timeoutMilliseconds: 30_000)

        let reports = log.reports.snapshot
        #expect(reports.count == 300)
        #expect(reports.allSatisfy { $0.error == nil }, "\(reports.compactMap(\.error).prefix(3))")
        #expect(Set(reports.map(\.token)).count == 300)
    }

    @Test(.timeLimit(.minutes(3)))
    func retriableProduceErrorsAreRetriedUntilDelivered() throws {
        let cluster = try MockCluster.with(brokers: 1, topic: "flaky", partitions: 1)
        defer { cluster.close() }
        #expect(try produce(cluster, topic: "flaky", count: 1).allSatisfy { $0.error == nil })

        // Produce (API key 0) fails 3 times: NOT_ENOUGH_REPLICAS (19),
        // REQUEST_TIMED_OUT (7), NOT_ENOUGH_REPLICAS_AFTER_APPEND (20).
        cluster.pushRequestErrors(apiKey: 0, errors: [19, 7, 20])
        let reports = try produce(cluster, topic: "flaky", count: 50, from: 1)
        #expect(reports.count == 50)
        #expect(reports.allSatisfy { $0.error == nil }, "\(reports.compactMap(\.error).prefix(3))")

        let consumer = try KafkaConsumer(properties: consumerProperties(cluster, group: "flaky"), listener: RecordingListener())
        defer { consumer.close() }
        try consumer.subscribe(["flaky"])
        let messages = try consume(consumer, count: 51, timeout: 20)
        // Idempotence: the retries did not duplicate anything.
        #expect(messages.count == 51)
        #expect(Set(messages.compactMap { text($0.value) }).count == 51)
        // One more, after them on the one partition: a duplicate of the 51
        // would come before it.
        #expect(try produce(cluster, topic: "flaky", count: 1, from: 51).allSatisfy { $0.error == nil })
        #expect(try consume(consumer, count: 1, timeout: 30).compactMap { text($0.value) } == ["value-51"])
    }

    @Test(.timeLimit(.minutes(3)))
    func aFullQueueIsARetriableErrorNotACrash() throws {
        let log = DeliveryLog()
        let producer = try KafkaProducer(
            properties: ["bootstrap.servers": "127.0.0.1:1", "queue.buffering.max.messages": "10", "log_level": "0"],
            onDelivery: log.callback)
        for index in 0..<10 {
            try producer.send(topic: "nowhere", key: nil, value: bytes("value-\(index)"), token: UInt64(index))
        }
        do {
            try producer.send(topic: "nowhere", key: nil, value: bytes("one too many"), token: 10)
            Issue.record("the 11th message was accepted")
        } catch {
            #expect(error.isRetriable)
            #expect(!error.isFatal)
            #expect(error.name == "_QUEUE_FULL")
            #expect(!error.message.contains("one too many"), "error text must not carry payloads")
        }
        #expect(producer.outstandingCount >= 10)  // + unserved client events
        #expect(throws: KafkaError.self) { try producer.flush(timeoutMilliseconds: 100) }
        // Closing fails what is still queued, so every token is answered.
        producer.close(flushTimeoutMilliseconds: 100)
        let reports = log.reports.snapshot
        #expect(Set(reports.map(\.token)) == Set(0..<10))
        #expect(reports.allSatisfy { $0.error != nil && $0.offset == nil })
    }
}
