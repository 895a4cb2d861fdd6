import Foundation
import Kafka
import KafkaMock
import Testing
import TestSupport

/// Everything runs against librdkafka's in-process mock cluster: real Kafka
/// protocol over loopback TCP, one fresh cluster per test.
@Suite struct ProducerConsumerTests {
    @Test(.timeLimit(.minutes(3)))
    func thousandMessagesWithKeysAndHeadersRoundTrip() throws {
        let cluster = try MockCluster.with(brokers: 3, topic: "events", partitions: 4, replicationFactor: 3)
        defer { cluster.close() }

        let log = DeliveryLog()
        let producer = try KafkaProducer(properties: producerProperties(cluster), onDelivery: log.callback)
        for index in 0..<1000 {
            let headers = [KafkaHeader("index", bytes("\(index)")), KafkaHeader("empty", []), KafkaHeader("null", nil)]
            try producer.send(topic: "events", key: bytes("key-\(index)"), value: bytes("value-\(index)"), headers: headers, token: UInt64(index))
        }
        try producer.flush(timeoutMilliseconds: 20_000)
        producer.close()

        let reports = log.reports.snapshot
        #expect(reports.count == 1000)
        #expect(reports.allSatisfy { $0.error == nil && $0.offset != nil && $0.topicPartition?.topic == "events" })
        #expect(Set(reports.map(\.token)) == Set((0..<1000).map(UInt64.init)), "every token comes back exactly once")
        var placed: [UInt64: (TopicPartition, Int64)] = [:]
        for report in reports { placed[report.token] = (report.topicPartition!, report.offset!) }

        let listener = RecordingListener()
        let consumer = try KafkaConsumer(properties: consumerProperties(cluster, group: "roundtrip"), listener: listener)
        defer { consumer.close() }
        try consumer.subscribe(["events"])
        let messages = try consume(consumer, count: 1000, timeout: 30)
        try #require(messages.count == 1000)

        #expect(Set(consumer.assignment) == Set((0..<4).map { TopicPartition("events", $0) }))
        var nextOffset: [TopicPartition: Int64] = [:]
        for message in messages {
            let key = try #require(text(message.key))
            let index = try #require(Int(key.dropFirst("key-".count)))
            #expect(text(message.value) == "value-\(index)")
            #expect(message.headers == [KafkaHeader("index", bytes("\(index)")), KafkaHeader("empty", []), KafkaHeader("null", nil)])
            #expect(placed[UInt64(index)]?.0 == message.topicPartition)
            #expect(placed[UInt64(index)]?.1 == message.offset)
            // Within a partition, offsets arrive in order and without gaps.
            #expect(message.offset == nextOffset[message.topicPartition, default: 0])
            nextOffset[message.topicPartition] = message.offset + 1
            #expect(message.timestamp != nil)
        }
        // Same key → same partition: the partitioner is by key.
        #expect(nextOffset.values.reduce(0, +) == 1000)
    }

    @Test(.timeLimit(.minutes(3)))
    func startOffsetsFromTheListenerAreHonoured() throws {
        let cluster = try MockCluster.with(brokers: 1, topic: "offsets", partitions: 2)
        defer { cluster.close() }
        let reports = try produce(cluster, topic: "offsets", count: 20, partition: 0)
        #expect(reports.allSatisfy { $0.error == nil })

        let start = TopicPartition("offsets", 0)
        let listener = RecordingListener(startOffsets: [start: 10])
        let consumer = try KafkaConsumer(properties: consumerProperties(cluster, group: "manual"), listener: listener)
        defer { consumer.close() }
        try consumer.subscribe(["offsets"])
        let messages = try consume(consumer, count: 10, timeout: 20)
        try #require(messages.count == 10)
        #expect(messages.first?.offset == 10)
        #expect(messages.map(\.offset) == Array(10..<20))
        #expect(messages.allSatisfy { $0.topicPartition == start })
        #expect(listener.events.snapshot.first.map { event in
            if case .assigned(let partitions) = event { Set(partitions) == [start, TopicPartition("offsets", 1)] } else { false }
        } == true)

        // A paused partition delivers nothing until resumed, then carries on.
        consumer.pause([start])
        #expect(try produce(cluster, topic: "offsets", count: 5, from: 20, partition: 0).allSatisfy { $0.error == nil })
        #expect(try consume(consumer, count: 1, timeout: 1).isEmpty)
        consumer.resume([start])
        #expect(try consume(consumer, count: 5, timeout: 10).map(\.offset) == Array(20..<25))
    }

    @Test(.timeLimit(.minutes(3)))
    func twoMembersSplitPartitionsAndTheSurvivorTakesOver() throws {
        let cluster = try MockCluster.with(brokers: 3, topic: "shared", partitions: 4)
        defer { cluster.close() }
        #expect(try produce(cluster, topic: "shared", count: 200).allSatisfy { $0.error == nil })

        let all = Set((0..<4).map { TopicPartition("shared", $0) })
        let listenerA = RecordingListener(), listenerB = RecordingListener()
        let consumerA = try KafkaConsumer(properties: consumerProperties(cluster, group: "pair"), listener: listenerA)
        let consumerB = try KafkaConsumer(properties: consumerProperties(cluster, group: "pair"), listener: listenerB)
        defer { consumerA.close(); consumerB.close() }
        try consumerA.subscribe(["shared"])
        try consumerB.subscribe(["shared"])
        let pollerA = PollingThread(consumerA), pollerB = PollingThread(consumerB)
        defer { pollerA.stop() }

        // Both members own partitions, disjointly, covering all four.
        let split = eventually(timeout: 25) {
            let a = listenerA.owned.snapshot, b = listenerB.owned.snapshot
            return !a.isEmpty && !b.isEmpty && a.isDisjoint(with: b) && a.union(b) == all
        }
        try #require(split, "A=\(listenerA.owned.snapshot) B=\(listenerB.owned.snapshot)")
        let ownedByB = listenerB.owned.snapshot
        #expect(Set(consumerB.assignment) == ownedByB)

        // B leaves: it sees the final revoke, A is assigned B's partitions.
        #expect(pollerB.stop())
        consumerB.close()
        #expect(listenerB.owned.snapshot.isEmpty)
        #expect(listenerB.events.snapshot.last == .revoked(Array(ownedByB)) || listenerB.events.snapshot.last.map { event in
            if case .revoked(let partitions) = event { Set(partitions) == ownedByB } else { false }
        } == true)
        #expect(eventually(timeout: 25) { listenerA.owned.snapshot == all }, "A=\(listenerA.owned.snapshot)")

        // Newly produced messages reach A on every partition, and nothing was
        // lost across the handover (duplicates are allowed: nothing committed).
        #expect(try produce(cluster, topic: "shared", count: 100, from: 200).allSatisfy { $0.error == nil })
        let seen: () -> Set<String> = {
            Set(pollerA.messages.snapshot.compactMap { text($0.value) } + pollerB.messages.snapshot.compactMap { text($0.value) })
        }
        let expected = Set((0..<300).map { "value-\($0)" })
        #expect(eventually(timeout: 20) { seen().isSuperset(of: expected) }, "missing \(expected.subtracting(seen()).count)")
        let lateForA = Set(pollerA.messages.snapshot.filter { (text($0.value).flatMap { Int($0.dropFirst(6)) } ?? 0) >= 200 }.map(\.topicPartition))
        #expect(lateForA == all)
        #expect(pollerA.errors.snapshot.isEmpty && pollerB.errors.snapshot.isEmpty)
    }

    @Test(.timeLimit(.minutes(3)))
    func aNewMemberResumesAfterTheCommittedOffset() throws {
        let cluster = try MockCluster.with(brokers: 1, topic: "resume", partitions: 1)
        defer { cluster.close() }
        #expect(try produce(cluster, topic: "resume", count: 30).allSatisfy { $0.error == nil })
        let partition = TopicPartition("resume", 0)

        let firstListener = RecordingListener()
        let first = try KafkaConsumer(properties: consumerProperties(cluster, group: "resumers"), listener: firstListener)
        try first.subscribe(["resume"])
        let early = try consume(first, count: 10, timeout: 20)
        try #require(early.map(\.offset) == Array(0..<10))
        try first.commit([partition: 5], asynchronous: false)
        // The final revoke during close may still use the consumer: this is
        // where a worker commits what it finished.
        let revokeTime = Locked<(assignment: [TopicPartition], committed: Bool)?>(nil)
        firstListener.onRevoke.withValue { hook in
            hook = { [first] partitions in
                let assignment = first.assignment
                let committed = (try? first.commit([partition: 10], asynchronous: false)) != nil
                revokeTime.withValue { $0 = (assignment, committed) }
            }
        }
        first.close()
        #expect(revokeTime.snapshot?.assignment == [partition])
        #expect(revokeTime.snapshot?.committed == true)

        let second = try KafkaConsumer(properties: consumerProperties(cluster, group: "resumers"), listener: RecordingListener())
        defer { second.close() }
        try second.subscribe(["resume"])
        // A join right after a leave waits out the mock's rebalance timer
        // (session.timeout.ms − 1 s), so allow for two joins.
        let rest = try consume(second, count: 20, timeout: 40)
        #expect(rest.first?.offset == 10)
        #expect(rest.map(\.offset) == Array(10..<30))
    }

    @Test func aConsumerNeedsAGroup() throws {
        let cluster = try MockCluster(brokers: 1)
        defer { cluster.close() }
        #expect(throws: KafkaError.self) {
            _ = try KafkaConsumer(properties: ["bootstrap.servers": cluster.bootstrapServers], listener: RecordingListener())
        }
        do {
            _ = try KafkaConsumer(properties: ["bootstrap.servers": cluster.bootstrapServers, "group.id": ""], listener: RecordingListener())
            Issue.record("an empty group.id was accepted")
        } catch {
            #expect(error.name == "_INVALID_ARG")
            #expect(!error.isRetriable)
        }
    }

    @Test func anUnknownPropertyIsATypedError() {
        #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(properties: ["no.such.property": "1"], onDelivery: { _ in })
        }
    }

    @Test func afterCloseCallsFailWithoutTouchingTheHandle() throws {
        // Trailing-closure form of the initializer (onError is optional).
        let producer = try KafkaProducer(properties: ["bootstrap.servers": "127.0.0.1:1"]) { _ in }
        producer.close()
        producer.close()
        #expect(throws: KafkaError.self) { try producer.send(topic: "t", key: nil, value: [1], token: 1) }
        let consumer = try KafkaConsumer(properties: ["bootstrap.servers": "127.0.0.1:1", "group.id": "g"], listener: RecordingListener())
        consumer.close()
        consumer.close()
        #expect(consumer.assignment.isEmpty)
        do {
            _ = try consumer.poll(timeoutMilliseconds: 10)
            Issue.record("poll after close returned")
        } catch {
            #expect(error.isFatal)
        }
    }
}

@Suite struct ProducerPrepareTests {
    @Test(.timeLimit(.minutes(1)))
    func prepareAnswersForAnExistingTopicAndNotForAnUnreachableBroker() throws {
        let cluster = try MockCluster.with(brokers: 1, topic: "prepared", partitions: 3)
        defer { cluster.close() }
        let producer = try KafkaProducer(properties: producerProperties(cluster), onDelivery: { _ in })
        defer { producer.close() }
        #expect(producer.prepare(topics: ["prepared"]))
        // After the lookup the first send is delivered without a metadata round.
        try producer.send(topic: "prepared", key: bytes("k"), value: bytes("v"), token: 1)
        try producer.flush(timeoutMilliseconds: 10_000)

        // Nothing listens on port 1: the lookup gives up within its timeout and says so.
        let nowhere = try KafkaProducer(properties: ["bootstrap.servers": "127.0.0.1:1"], onDelivery: { _ in })
        defer { nowhere.close(flushTimeoutMilliseconds: 0) }
        #expect(!nowhere.prepare(topics: ["prepared"], timeoutMilliseconds: 500))
    }
}

/// `wakeFetcher` asks an assigned partition's leader for its watermarks (the
/// request is what wakes the broker thread): answered for a partition that
/// exists, refused within its timeout for one that does not. The wake's
/// effect on a drain held back by the prefetch bound is measured by
/// `make bench` (backlog). `cachedHighWatermark` is what the fetch responses
/// reported, without a request.
@Suite struct WakeFetcherTests {
    @Test(.timeLimit(.minutes(1)))
    func theLeaderOfAnExistingPartitionAnswers() throws {
        let cluster = try MockCluster.with(brokers: 1, topic: "woken", partitions: 2)
        defer { cluster.close() }
        _ = try produce(cluster, topic: "woken", count: 4)
        let listener = RecordingListener()
        let consumer = try KafkaConsumer(properties: consumerProperties(cluster, group: "woken"), listener: listener)
        defer { consumer.close() }
        try consumer.subscribe(["woken"])
        let consumed = try consume(consumer, count: 4, timeout: 30)
        #expect(consumed.count == 4)
        // What the fetch responses reported: each partition's end, as far as consumed.
        for partition in [TopicPartition("woken", 0), TopicPartition("woken", 1)] {
            let end = consumed.filter { $0.topicPartition == partition }.map { $0.offset + 1 }.max()
            if let end { #expect(consumer.cachedHighWatermark(partition) == end) }
        }
        #expect(consumer.cachedHighWatermark(TopicPartition("woken", 7)) == nil)

        #expect(consumer.wakeFetcher(for: TopicPartition("woken", 1), timeoutMilliseconds: 5_000))
        #expect(!consumer.wakeFetcher(for: TopicPartition("woken", 7), timeoutMilliseconds: 500))
        consumer.close()
        #expect(!consumer.wakeFetcher(for: TopicPartition("woken", 0), timeoutMilliseconds: 500), "after close the handle is not touched")
    }
}
