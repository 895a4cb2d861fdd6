@testable import Chaos
import Foundation
import Testing

/// The fault schedule is decided from the seed and the options alone: a seed
/// replays the same faults at the same times, and a run long enough deals
/// every kind its broker allows.
@Suite struct FaultScheduleTests {
    static func options(duration: TimeInterval, faults: Int, broker: BrokerKind = .mock) -> ChaosOptions {
        let unused = URL(fileURLWithPath: "/nonexistent")
        var options = ChaosOptions(worker: unused, tooling: unused, repository: unused)
        options.duration = duration
        options.faults = faults
        options.broker = broker
        return options
    }

    static func plan(_ options: ChaosOptions, seed: UInt64) -> FaultSchedule {
        var random = FaultSchedule.random(seed: seed)
        return FaultSchedule(options: options, random: &random)
    }

    static let requestErrors: Set<FaultKind> = [.produceErrors, .fetchErrors, .commitErrors]

    @Test func theSameSeedGivesTheSamePlanAndAnotherSeedAnother() {
        let options = Self.options(duration: 120, faults: 30)
        let plan = Self.plan(options, seed: 20_261_129)
        #expect(plan.faults.count == 30)
        #expect(Self.plan(options, seed: 20_261_129) == plan)
        #expect(Self.plan(options, seed: 20_261_130) != plan)
    }

    @Test func theInjectorDrawsFromWhereTheScheduleLeftTheRandomSource() {
        var first = FaultSchedule.random(seed: 7)
        var second = FaultSchedule.random(seed: 7)
        _ = FaultSchedule(options: Self.options(duration: 60, faults: 15), random: &first)
        _ = FaultSchedule(options: Self.options(duration: 60, faults: 15), random: &second)
        var fresh = FaultSchedule.random(seed: 7)
        let next = first.next()
        #expect(next == second.next())
        #expect(next != fresh.next(), "the schedule's draws are used up")
    }

    @Test func faultsComeInOrderWithinTheDuration() {
        let plan = Self.plan(Self.options(duration: 40, faults: 13), seed: 3)
        let times = plan.faults.map(\.at)
        #expect(times == times.sorted())
        #expect(times.allSatisfy { $0 > 0 && $0 < 40 })
    }

    /// One round of the deck: the short run of `make test` has every kind
    /// (broker restarts apart) and SIGKILL three times.
    @Test func oneRoundDealsEveryKindOnceAndThreeKills() {
        let plan = Self.plan(Self.options(duration: 60, faults: 22), seed: 20_261_129)
        let kinds = plan.faults.map(\.kind)
        #expect(Set(kinds) == Set(FaultKind.allCases).subtracting([.brokerRestart]))
        #expect(kinds.filter { $0 == .workerKill }.count == 3)
    }

    @Test(arguments: [UInt64(1), 7, 20_261_129])
    func aLongMockRunHasEveryKindWithBrokerRestartsApart(seed: UInt64) {
        let options = Self.options(duration: 1200, faults: 300)
        let kinds = Self.plan(options, seed: seed).faults.map(\.kind)
        #expect(Set(kinds) == Set(FaultKind.allCases))
        #expect(kinds.filter { $0 == .brokerRestart }.count == options.brokerRestartCount)
        #expect(options.brokerRestartCount == 2)
    }

    /// The soak schedule in which every outcome event must arrive: every kind but broker restarts.
    @Test(arguments: [UInt64(1), 7, 20_261_129])
    func aLongRunWithoutBrokerRestartsHasEveryOtherKind(seed: UInt64) {
        var options = Self.options(duration: 1800, faults: 460)
        options.brokerRestarts = false
        let kinds = Self.plan(options, seed: seed).faults.map(\.kind)
        #expect(options.brokerRestartCount == 0)
        #expect(!kinds.contains(.brokerRestart))
        #expect(Set(kinds) == Set(FaultKind.allCases).subtracting([.brokerRestart]))
    }

    @Test(arguments: [UInt64(1), 7, 20_261_129])
    func aLongTansuRunHasEveryKindButTheMocksRequestErrors(seed: UInt64) {
        let kinds = Set(Self.plan(Self.options(duration: 1200, faults: 300, broker: .tansu), seed: seed).faults.map(\.kind))
        #expect(kinds == Set(FaultKind.allCases).subtracting(Self.requestErrors))
    }
}

/// What every part of a run reports violations to.
@Suite struct InvariantLedgerTests {
    @Test func declaredInvariantsCountZeroAndViolationsCountWithAFewExamples() {
        let ledger = InvariantLedger()
        ledger.declare("converged")
        for index in 0..<7 { ledger.violation("exactlyOneResult", "event \(index) has no result") }
        ledger.declare("exactlyOneResult")
        #expect(ledger.counts == ["converged": 0, "exactlyOneResult": 7])
        #expect(ledger.examples == (0..<5).map { "exactlyOneResult: event \($0) has no result" })
    }
}
