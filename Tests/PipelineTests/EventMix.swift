import Foundation
import TestIssuer
import Verification

/// A realistic mix: mostly valid events of all three flows, and every fault
/// the generator knows in every flow it applies to.
func mixedEvents(_ factory: inout TestIssuer.EventFactory, count: Int, faultEvery: Int = 4) throws -> [TestIssuer.GeneratedEvent] {
    let faults = TestIssuer.Fault.allCases.flatMap { fault in fault.flows.map { (fault, $0) } }
    var events: [TestIssuer.GeneratedEvent] = []
    var faultIndex = 0
    for index in 0..<count {
        if index % faultEvery == faultEvery - 1 {
            let (fault, flow) = faults[faultIndex % faults.count]
            faultIndex += 1
            events.append(try factory.event(flow, fault: fault))
        } else {
            let flow = Flow.allCases[index % 3]
            var options = TestIssuer.EventOptions()
            options.deviceMac = flow == .isoDeviceResponse && index % 2 == 0
            options.recipient = index % 5 == 0 ? .rotated : .current
            events.append(try factory.event(flow, options: options))
        }
    }
    return events
}

/// Kafka keys spread over a few dozen "sessions", so per-key ordering and
/// cross-key concurrency are both exercised.
func records(_ events: [TestIssuer.GeneratedEvent]) -> [(key: String, value: [UInt8])] {
    events.enumerated().map { index, event in (key: "session-\(index % 40)", value: event.json()) }
}
