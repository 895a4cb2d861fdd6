import Foundation
import Kafka
@testable import Pipeline
import Postgres
import Testing
import TestSupport

/// Records the broker no longer has at a partition's position: the worker
/// says so in a JSON error line and a metric, keeps a row in `consumer_gaps`,
/// and follows `kafka.offsetGapPolicy`.
///
/// The mock broker keeps about 5 MB a partition and deletes older records
/// (librdkafka's rdkafka_mock.c): 60 records of 120 KB on one key (one
/// partition) leave its first records deleted before any worker reads them.
@Suite(.serialized, .enabled(if: Services.available, Services.skipMessage))
struct OffsetGapTests {
    static let oversizedRecords = 60

    /// Records of ~120 KB with ids: the worker stores each as `event.invalid`.
    private func bulkyRecords(_ prefix: String, count: Int) -> [(key: String, value: [UInt8])] {
        let padding = String(repeating: "p", count: 120_000)
        return (0..<count).map { index in
            ("one-partition", Array(#"{"specversion":"1.0","id":"\#(prefix)-\#(index)","padding":"\#(padding)"}"#.utf8))
        }
    }

    private struct GapRow { let partition: Int64; let from: Int64; let to: Int64; let kind: String; let skipped: Int64?; let policy: String }

    private func gaps(_ fixture: PipelineFixture) throws -> [GapRow] {
        let connection = try fixture.database.connect()
        defer { connection.close() }
        let rows: PostgresResult
        do {
            rows = try connection.execute("SELECT partition, from_offset, to_offset, kind, skipped_offsets, policy FROM consumer_gaps ORDER BY detected_at")
        } catch {
            if error.sqlState == "42P01" { return [] }
            throw error
        }
        return (0..<rows.rowCount).map { row in
            GapRow(partition: rows.int(row, "partition")!, from: rows.int(row, "from_offset")!, to: rows.int(row, "to_offset")!,
                   kind: rows.string(row, "kind")!, skipped: rows.int(row, "skipped_offsets"), policy: rows.string(row, "policy")!)
        }
    }

    /// The smallest offset stored for the partition: where reading went on.
    private func firstStoredOffset(_ fixture: PipelineFixture, partition: Int64) throws -> Int64? {
        let connection = try fixture.database.connect()
        defer { connection.close() }
        return try connection.execute("SELECT min(source_offset) AS low FROM results WHERE source_partition = $1", [.int(partition)]).int(0, "low")
    }

    @Test(.enabled(if: TestBroker.Kind.current == .mock, TestBroker.mockOnly)) func recordsDeletedBeforeTheyWereReadAreSkippedLoudlyAndDurably() throws {
        let fixture = try PipelineFixture()
        try fixture.produce(bulkyRecords("bulky", count: Self.oversizedRecords))
        let worker = try fixture.startWorker()
        #expect(try eventually(60) { try !gaps(fixture).isEmpty }, "\(worker.log.suffix(1500))")
        let found = try gaps(fixture)
        #expect(found.count == 1)
        let gap = try #require(found.first)
        #expect(gap.kind == "deleted" && gap.policy == "skip" && gap.from == 0)
        #expect(gap.to > 0 && gap.to < Int64(Self.oversizedRecords), "the mock deleted some, not all: \(gap.to)")
        #expect(gap.skipped == gap.to)

        // Everything the broker still had is read, starting exactly where the gap ends.
        let kept = Self.oversizedRecords - Int(gap.to)
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == kept }, "\(worker.log.suffix(1500))")
        #expect(try firstStoredOffset(fixture, partition: gap.partition) == gap.to)

        let line = try #require(worker.log.split(separator: "\n").first { $0.contains("records deleted by the broker") })
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(fields["level"] as? String == "error")
        #expect(fields["topic"] as? String == "veridoc.requests" && fields["partition"] as? String == "\(gap.partition)")
        #expect(fields["fromOffset"] as? String == "0" && fields["toOffset"] as? String == "\(gap.to)" && fields["skippedOffsets"] as? String == "\(gap.to)")
        #expect(!line.contains("bulky-"), "no record content in the log line")

        let port = try #require(worker.httpPort())
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: port).body)
        #expect(metrics.values("veridoc_kafka_offsets_skipped_total").first { $0.labels["partition"] == "\(gap.partition)" }?.value == Double(gap.to))
        #expect(metrics.values("veridoc_kafka_offset_gaps_total").first { $0.labels["kind"] == "deleted" }?.value == 1)
        #expect(try RawHTTP.request("GET", "/readyz", port: port).status == 200)
        #expect(worker.terminate() == 0)

        // A later owner starts past the gap: no second row, nothing read twice.
        let next = try fixture.startWorker("worker-2")
        #expect(try eventually(30) { next.log.contains("partitions assigned") })
        // A record behind the gap's partition: once it is stored, the new
        // owner has read that partition from where the first one left it.
        let sentinel = try fixture.factory.event(.isoDeviceResponse)
        try fixture.produce([("one-partition", sentinel.json())])
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == kept + 1 }, "\(next.log.suffix(1500))")
        #expect(try gaps(fixture).count == 1)
        #expect(next.terminate() == 0)
    }

    @Test(.enabled(if: TestBroker.Kind.current == .mock, TestBroker.mockOnly)) func withTheStopPolicyThePartitionIsNotReadAndTheWorkerIsNotReady() throws {
        let fixture = try PipelineFixture()
        try fixture.produce(bulkyRecords("stop", count: Self.oversizedRecords))
        let worker = try fixture.startWorker(environment: ["VERIDOC_KAFKA_OFFSET_GAP_POLICY": "stop"])
        #expect(try eventually(60) { try !gaps(fixture).isEmpty }, "\(worker.log.suffix(1500))")
        let gap = try #require(try gaps(fixture).first)
        #expect(gap.kind == "deleted" && gap.policy == "stop")
        let port = try #require(worker.httpPort())
        #expect(try eventually(60) { try RawHTTP.request("GET", "/readyz", port: port).status == 503 })
        #expect(try RawHTTP.request("GET", "/readyz", port: port).body.contains("offset gap"))
        // Records on other partitions are read and stored meanwhile: once one
        // is, the worker has been fetching, and still nothing of the stopped
        // partition may be stored.
        let others = try (0..<16).map { index in ("other-\(index)", try fixture.factory.event(.isoDeviceResponse).json()) }
        try fixture.produce(others)
        let elsewhere = "SELECT count(*) AS count FROM results WHERE source_partition <> \(gap.partition)"
        #expect(try eventually(60) { try fixture.database.count(elsewhere) > 0 }, "\(worker.log.suffix(1500))")
        #expect(try fixture.database.count("SELECT count(*) AS count FROM results WHERE source_partition = \(gap.partition)") == 0,
                "nothing past the gap is read")
        let metrics = try PrometheusText(RawHTTP.request("GET", "/metrics", port: port).body)
        #expect(metrics.values("veridoc_partitions_stopped").first?.value == 1)
        #expect(worker.terminate() == 0)
    }

    /// A stored position past the log end (the topic was recreated): reading
    /// starts again at the log start and the position moves back with it.
    @Test func aPositionPastTheLogEndIsATruncationAndReadingStartsOver() throws {
        let fixture = try PipelineFixture()
        let first = try fixture.startWorker()
        let events = try (0..<10).map { _ in try fixture.factory.event(.isoDeviceResponse) }
        try fixture.produce(events.map { ("truncated", $0.json()) })
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 10 }, "\(first.log.suffix(1500))")
        #expect(first.terminate() == 0)
        let partition = try #require(try fixture.database.connect().execute("SELECT max(source_partition) AS p FROM results").int(0, "p"))
        let connection = try fixture.database.connect()
        _ = try connection.execute("UPDATE consumer_positions SET next_offset = 1000 WHERE partition = $1", [.int(partition)])
        connection.close()

        let later = try (0..<5).map { _ in try fixture.factory.event(.isoDeviceResponse) }
        try fixture.produce(later.map { ("truncated", $0.json()) })
        let second = try fixture.startWorker("worker-2")
        #expect(try eventually(60) { try fixture.database.count("SELECT count(*) AS count FROM results") == 15 }, "\(second.log.suffix(1500))")
        let gap = try #require(try gaps(fixture).first)
        #expect(gap.kind == "truncated" && gap.from == 1000 && gap.to == 0 && gap.skipped == nil && gap.partition == partition)
        #expect(try eventually(60) {
            try fixture.database.connect().execute("SELECT next_offset FROM consumer_positions WHERE partition = $1", [.int(partition)]).int(0, "next_offset") == 15
        }, "the position moved back to the new log and on to its end")
        #expect(second.log.contains("the topic was recreated or truncated"))
        #expect(second.terminate() == 0)
    }
}

/// Which jumps in offsets are gaps, from the watermarks alone.
struct OffsetGapDetectionTests {
    let partition = TopicPartition("t", 3)

    @Test func aJumpPastTheLogStartIsADeletion() {
        let gap = OffsetGap.detect(partition, expected: 10, received: 895, watermarks: (low: 895, high: 2000))
        #expect(gap == OffsetGap(partition: partition, kind: .deleted, from: 10, to: 895))
        #expect(gap?.skippedOffsets == 885)
    }

    @Test func aJumpOverMarkersOrCompactedRecordsIsNot() {
        // Transaction markers and compaction leave holes above the log start.
        #expect(OffsetGap.detect(partition, expected: 10, received: 12, watermarks: (low: 0, high: 2000)) == nil)
        #expect(OffsetGap.detect(partition, expected: 10, received: 12, watermarks: (low: 10, high: 2000)) == nil)
        // No watermarks reported yet: nothing is claimed.
        #expect(OffsetGap.detect(partition, expected: 10, received: 900, watermarks: nil) == nil)
        #expect(OffsetGap.detect(partition, expected: 10, received: 10, watermarks: (low: 50, high: 60)) == nil)
    }

    @Test func goingBackFromPastTheLogEndIsATruncation() {
        let gap = OffsetGap.detect(partition, expected: 1000, received: 0, watermarks: (low: 0, high: 15))
        #expect(gap == OffsetGap(partition: partition, kind: .truncated, from: 1000, to: 0))
        #expect(gap?.skippedOffsets == nil)
        // A record received again inside the log is the tracker's to drop, not a gap.
        #expect(OffsetGap.detect(partition, expected: 100, received: 40, watermarks: (low: 0, high: 150)) == nil)
        // Nor when a broker reports the high watermark too low (tansu) but the record is not the log start.
        #expect(OffsetGap.detect(partition, expected: 100, received: 40, watermarks: (low: 0, high: 41)) == nil)
        #expect(OffsetGap.detect(partition, expected: 100, received: 7, watermarks: (low: 7, high: 41)) == OffsetGap(partition: partition, kind: .truncated, from: 100, to: 7))
    }
}
