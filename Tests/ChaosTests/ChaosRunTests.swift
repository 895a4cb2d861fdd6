import Chaos
import Foundation
import Testing
import TestSupport

/// The short chaos run of `make test`: a few hundred events, one fault of each
/// kind (SIGKILL three times), real worker processes, its own broker and PostgreSQL, and a
/// webhook receiver Veridoc did not write; zero invariant violations. Guarded like the pipeline tests (scripts/with-test-services).
@Suite(.serialized)
struct ChaosRunTests {
    static let enabled = ProcessInfo.processInfo.environment["VERIDOC_TEST_POSTGRES"] != nil

    @Test(.enabled(if: enabled, "VERIDOC_TEST_POSTGRES is not set: run through `make test` (scripts/with-test-services)"))
    func shortRunKeepsEveryInvariant() throws {
        var options = ChaosOptions(worker: Binaries.veridoc, tooling: Binaries.veridocDev, repository: Binaries.repository)
        options.duration = 45
        options.events = 300
        options.faults = 22
        options.seed = 20_261_129
        options.output = Binaries.repository.appendingPathComponent("chaos/results/test-run.json")
        let summary = try ChaosHarness(options: options, log: { print("chaos: \($0)") }).run()
        print(summary.text)
        #expect(summary.violations == 0, "\(summary.examples)")
        #expect(summary.faultsTotal >= 16)
        #expect(summary.results == summary.distinctEventIDs)
        #expect(summary.distinctEventIDs > 250)
        #expect(summary.webhooksAcknowledged == summary.results, "every result's outcome acknowledged by the receiver")
        #expect(summary.webhookRequests > summary.webhooksAcknowledged, "the receiver's faults made deliveries come again")
        for name in ["exactlyOneResult", "elementsOnce", "verdictMatchesReference", "outcomePublished", "positionPassedUnfinished",
                     "nonceAcceptedTwice", "processesLeft", "workerDrainExit", "converged", "webhookDelivered", "webhookForStoredResult",
                     "webhookSameBodyPerID", "webhookBodyIsOutcome", "webhookVerified", "webhookRowsDelivered"] {
            #expect(summary.invariants[name] == 0, "\(name)")
        }
    }
}
