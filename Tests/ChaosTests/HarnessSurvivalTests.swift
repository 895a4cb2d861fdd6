import Chaos
import Foundation
import Synchronization
import Testing
import TestSupport

/// The harness outlives its parts: a broker killed under it is a finding, is
/// restarted, and the run still ends with its checks; a harness interrupted
/// while it waits stops every process it started.
@Suite(.serialized)
struct HarnessSurvivalTests {
    @Test(.enabled(if: ChaosRunTests.enabled, "VERIDOC_TEST_POSTGRES is not set: run through `make test` (scripts/with-test-services)"))
    func aBrokerKilledUnderTheRunIsAFindingAndTheRunGoesOnToItsChecks() throws {
        let run = Watched(seed: 20_261_202)
        let killer = Thread {
            // Mid-production: workers are consuming, records are in flight.
            guard let pid = run.firstBroker() else { return }
            kill(pid, SIGKILL)
        }
        killer.start()
        let summary = try ChaosHarness(options: run.options, log: run.log).run()
        print(summary.text)
        let killed = try #require(run.brokerPID.withLock { $0 })
        #expect(!Self.isRunning(killed), "the killed broker is gone")
        #expect(summary.incidents.contains { $0.hasPrefix("brokerDied") && $0.contains("signal 9") }, "\(summary.incidents)")
        #expect(summary.brokerRestarts == 1)
        #expect(summary.violations == 0, "\(summary.examples)")
        #expect(summary.results == summary.distinctEventIDs && summary.distinctEventIDs > 100)
        #expect(summary.invariants["processesLeft"] == 0 && summary.invariants["exactlyOneResult"] == 0 && summary.invariants["converged"] == 0)
    }

    /// Regression (the 30-minute soak): the broker died while PostgreSQL was
    /// down, the harness could not reset the stored positions, gave the
    /// restart up half done, and the rest of the run measured its own
    /// confusion (millions of position violations). Now the restart waits for
    /// PostgreSQL, which the watchdog brings back meanwhile.
    @Test(.enabled(if: ChaosRunTests.enabled, "VERIDOC_TEST_POSTGRES is not set: run through `make test` (scripts/with-test-services)"))
    func aBrokerThatDiesWhilePostgreSQLIsDownIsRestartedWhenItIsBack() throws {
        let run = Watched(seed: 20_261_203)
        let killer = Thread {
            guard let brokerPID = run.firstBroker(), let folder = run.work.withLock({ $0 }),
                  let postmaster = try? String(contentsOfFile: folder + "/pg/data/postmaster.pid", encoding: .utf8).split(separator: "\n").first,
                  let postmasterPID = pid_t(postmaster) else { return }
            // PostgreSQL first, so that the broker's restart finds it gone.
            kill(postmasterPID, SIGKILL)
            Thread.sleep(forTimeInterval: 0.2)
            kill(brokerPID, SIGKILL)
        }
        killer.start()
        let summary = try ChaosHarness(options: run.options, log: run.log).run()
        print(summary.text)
        #expect(summary.incidents.contains { $0.hasPrefix("brokerDied") }, "\(summary.incidents)")
        #expect(summary.incidents.contains { $0.hasPrefix("postgresDied") }, "\(summary.incidents)")
        #expect(!summary.incidents.contains { $0.hasPrefix("brokerRestartFailed") }, "\(summary.incidents)")
        #expect(summary.brokerRestarts == 1)
        #expect(summary.violations == 0, "\(summary.examples)")
        #expect(summary.results == summary.distinctEventIDs && summary.distinctEventIDs > 100)
    }

    /// A short run without faults of its own, and what its log says: the
    /// first broker's pid and the work folder.
    final class Watched: Sendable {
        let options: ChaosOptions
        let brokerPID = Mutex<pid_t?>(nil)
        let work = Mutex<String?>(nil)

        init(seed: UInt64) {
            var options = ChaosOptions(worker: Binaries.veridoc, tooling: Binaries.veridocDev, repository: Binaries.repository)
            options.duration = 20
            options.events = 150
            options.faults = 0
            options.seed = seed
            self.options = options
        }

        var log: @Sendable (String) -> Void {
            { [self] line in
                print("chaos: \(line)")
                if line.hasPrefix("work directory: ") { work.withLock { $0 = String(line.dropFirst("work directory: ".count)) } }
                if let range = line.range(of: "(pid "), line.hasPrefix("broker:") {
                    let digits = line[range.upperBound...].prefix { $0.isNumber }
                    brokerPID.withLock { if $0 == nil { $0 = pid_t(digits) } }
                }
            }
        }

        /// The first broker's pid, 8 s after it started (nil if it never did).
        func firstBroker() -> pid_t? {
            let deadline = Date().addingTimeInterval(60)
            while brokerPID.withLock({ $0 }) == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
            Thread.sleep(forTimeInterval: 8)
            return brokerPID.withLock { $0 }
        }
    }

    /// Alive and not a zombie: a killed child whose parent has exited waits for
    /// init to reap it, which this machine's init may never do.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let state = status.split(separator: "\n").first { $0.hasPrefix("State:") } ?? ""
        return !state.contains("Z") && !state.contains("X")
    }

    @Test(.enabled(if: ChaosRunTests.enabled, "VERIDOC_TEST_POSTGRES is not set: run through `make test` (scripts/with-test-services)"))
    func aHarnessStoppedBySIGTERMWhileItWaitsLeavesNothingRunning() throws {
        let process = Process()
        process.executableURL = Binaries.veridocDev
        process.arguments = ["chaos", "--duration", "8", "--events", "60", "--faults", "0", "--seed", "7", "--repository", Binaries.repository.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(120)
        while !text.contains("waiting for convergence") && Date() < deadline {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("waiting for convergence"), "\(text.suffix(1500))")
        let work = try #require(text.split(separator: "\n").first { $0.contains("work directory: ") }.map { String($0.split(separator: " ").last!) })
        let broker = text.split(separator: "\n").first { $0.contains("broker:") && $0.contains("(pid ") }
            .flatMap { line in line.range(of: "(pid ").map { pid_t(line[$0.upperBound...].prefix { $0.isNumber }) } } ?? nil
        process.terminate()  // SIGTERM
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGTERM, "exits as a signal-ended process")
        // Whatever it started: workers (their config is in the work folder), the
        // postmaster (its data folder is there), the broker.
        let left = try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(work)
        }
        #expect(left.isEmpty, "processes left: \(left)")
        let brokerPID = try #require(broker)
        #expect(!Self.isRunning(brokerPID), "the broker is stopped")
    }
}
