import DemoKit
import Foundation

/// `veridoc bench [--events N] [--seconds S]`: the in-process measurements of
/// `make bench` (crypto ceiling, verification pool), printed as a table.
enum BenchCommand {
    static func run(_ arguments: [String]) -> Int32 {
        do {
            let parsed = try ParsedArguments(arguments, options: ["--events", "--seconds", "--threads"], flags: [])
            let count = Int(parsed.options["--events"] ?? "") ?? 2000
            let seconds = Double(parsed.options["--seconds"] ?? "") ?? 1
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let threads = Int(parsed.options["--threads"] ?? "") ?? cores

            let primitives = try Benchmark.primitives(seconds: seconds)
            for primitive in primitives {
                print(String(format: "%-22@ %10.0f ops/s", primitive.name as NSString, primitive.operationsPerSecond))
            }
            let rates = Dictionary(uniqueKeysWithValues: primitives.map { ($0.name, $0.operationsPerSecond) })
            // An Apple in-app event: one HPKE open (one ECDH) and two P-256 verifies (issuer, device).
            let perEvent = 1 / rates["HPKE open 6 KB"]! + 2 / rates["ECDSA P-256 verify"]!
            let ceiling = 1 / perEvent
            print(String(format: "ceiling per core       %10.0f events/s (1 HPKE open + 2 ECDSA P-256 verify)", ceiling))

            let (events, verifier) = try Benchmark.corpus(count: count)
            _ = Benchmark.verifyThroughput(events: Array(events.prefix(100)), verifier: verifier, threads: 1)
            let one = Benchmark.verifyThroughput(events: events, verifier: verifier, threads: 1)
            let all = Benchmark.verifyThroughput(events: events, verifier: verifier, threads: threads)
            print(String(format: "verify pool, 1 thread  %10.0f events/s  %.0f%% of ceiling (%d verified)", one.eventsPerSecond, 100 * one.eventsPerSecond / ceiling, one.verified))
            print(String(format: "verify pool, %d threads %10.0f events/s  %.0f%% of ceiling × cores (%d verified)", threads, all.eventsPerSecond, 100 * all.eventsPerSecond / (ceiling * Double(cores)), all.verified))
            return 0
        } catch let error as UsageError {
            Console.error("\(error.message)\n\n\(Usage.text)")
            return 2
        } catch {
            Console.error("bench failed: \(error)")
            return 1
        }
    }
}
