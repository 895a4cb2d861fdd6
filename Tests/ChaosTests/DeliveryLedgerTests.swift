@testable import Chaos
import Foundation
@testable import Kafka
import Testing

/// What the producer's backlog bound and the convergence check read from the
/// ledger: records sent and not yet reported count against the bound (the
/// soak's mock broker deleted a resend that went out between two checks),
/// and each broker epoch knows when it began (a gap recorded before then is
/// in an older broker's offsets).
@Suite struct DeliveryLedgerTests {
    static func report(_ token: UInt64, partition: Int32, offset: Int64) -> KafkaProducer.DeliveryReport {
        KafkaProducer.DeliveryReport(token: token, topicPartition: TopicPartition("t", partition), offset: offset, error: nil)
    }

    @Test func recordsInFlightCountUntilTheirReportArrives() {
        let ledger = DeliveryLedger()
        let sizes = [100, 200, 400]
        let tokens = sizes.indices.map { ledger.sent($0) }
        #expect(ledger.pendingBytes { sizes[$0] } == 700)
        ledger.report(Self.report(tokens[1], partition: 0, offset: 0))
        #expect(ledger.pendingBytes { sizes[$0] } == 500)
        #expect(ledger.backlogBytes(beyond: [:]) { sizes[$0] } == [0: 200])
        ledger.report(Self.report(tokens[0], partition: 1, offset: 0))
        ledger.report(Self.report(tokens[2], partition: 1, offset: 1))
        #expect(ledger.pendingBytes { sizes[$0] } == 0)
        #expect(ledger.backlogBytes(beyond: [1: 1]) { sizes[$0] } == [0: 200, 1: 400])
    }

    @Test func aNewEpochForgetsTheOldBrokerAndKnowsWhenItBegan() throws {
        let ledger = DeliveryLedger()
        let old = ledger.sent(0)
        let before = ledger.epochStarted
        Thread.sleep(forTimeInterval: 0.01)
        ledger.newEpoch()
        #expect(ledger.epochStarted > before)
        #expect(ledger.pendingBytes { _ in 1 } == 0)
        // A report from the old broker is ignored.
        ledger.report(Self.report(old, partition: 0, offset: 7))
        #expect(!ledger.wasDelivered(0))
    }
}
