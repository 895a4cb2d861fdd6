import Foundation
import TestIssuer

/// Which faults a run injects and when, decided before the first one from the
/// run's seeded random source and its options: `count` faults spread over the
/// duration, kinds dealt from shuffled rounds of every kind that applies to the
/// broker, SIGKILL three times per round (so a run of 13+ faults has each kind
/// at least once), broker restarts at even places apart.
struct FaultSchedule: Equatable, Sendable {
    struct Fault: Equatable, Sendable {
        /// Seconds after injection begins.
        let at: TimeInterval
        let kind: FaultKind
    }

    let faults: [Fault]

    /// A run's random source for its faults: first the schedule's draws, then
    /// the injector's (which worker, how long), so one seed replays both.
    static func random(seed: UInt64) -> TestIssuer.SeededRandom {
        TestIssuer.SeededRandom(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 17)
    }

    /// The kinds a round deals. Request errors need the mock's control channel;
    /// broker restarts are placed apart.
    static func dealt(broker: BrokerKind) -> [FaultKind] {
        let applicable = FaultKind.allCases.filter { kind in
            kind != .brokerRestart && (broker == .mock || ![.produceErrors, .fetchErrors, .commitErrors].contains(kind))
        }
        return applicable + [.workerKill, .workerKill]
    }

    init(options: ChaosOptions, random: inout TestIssuer.SeededRandom) {
        self.init(duration: options.duration, count: options.faultCount, brokerRestarts: options.brokerRestartCount, broker: options.broker, random: &random)
    }

    init(duration: TimeInterval, count: Int, brokerRestarts restarts: Int, broker: BrokerKind, random: inout TestIssuer.SeededRandom) {
        let kinds = Self.dealt(broker: broker)
        var faults: [Fault] = []
        var deck: [FaultKind] = []
        let spacing = duration * 0.9 / Double(max(count, 1))
        for index in 0..<count {
            if deck.isEmpty { deck = Self.shuffled(kinds, &random) }
            let jitter = Double(random.next() % 1000) / 1000 * spacing * 0.5
            // Restarts at even intervals, in the first 70 % (while producing).
            let kind = restarts > 0 && (index + 1) % max(1, Int(Double(count) * 0.7) / restarts) == 0 && index < Int(Double(count) * 0.7)
                ? FaultKind.brokerRestart : deck.removeFirst()
            faults.append(Fault(at: duration * 0.05 + Double(index) * spacing + jitter, kind: kind))
        }
        self.faults = faults
    }

    private static func shuffled<T>(_ items: [T], _ random: inout TestIssuer.SeededRandom) -> [T] {
        var items = items
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            let other = Int(random.next() % UInt64(index + 1))
            items.swapAt(index, other)
        }
        return items
    }
}
