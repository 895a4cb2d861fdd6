import CommandLineSupport
import DemoKit
import Foundation

/// `veridoc-dev loadgen --bootstrap SERVERS [--topic T] [--rate R] [--count N]
/// [--mix M] [--fixture DIR] [--seed S]`: synthetic requests to any broker.
/// The tenant they are made for lives in the fixture folder (created on first
/// use): configure the worker with its `config.json` tenants.
/// `--fixture-only` makes the folder, if missing, and produces nothing (no
/// broker needed), so a worker can be configured with it before any load runs.
enum LoadgenCommand {
    static func run(_ arguments: [String]) -> Int32 {
        return ExitStatus.returning(usage: Usage.text, failure: "loadgen failed") {
            let parsed = try ParsedArguments(
                arguments, options: ["--bootstrap", "--topic", "--rate", "--count", "--mix", "--fixture", "--seed"], flags: ["--fixture-only"])
            let seed = UInt64(parsed.options["--seed"] ?? "") ?? UInt64.random(in: 0...UInt64.max)
            let fixtureDirectory = URL(fileURLWithPath: parsed.options["--fixture"] ?? "loadgen-fixture")
            if parsed.flags.contains("--fixture-only") {
                let (_, created) = try LoadFixture.openOrCreate(fixtureDirectory, seed: seed)
                print("\(created ? "new" : "existing") tenant fixture in \(fixtureDirectory.path)")
                return 0
            }
            guard let bootstrap = parsed.options["--bootstrap"] else { throw UsageError("--bootstrap SERVERS is required") }
            let topic = parsed.options["--topic"] ?? "veridoc.requests"
            let count = try parsed.options["--count"].map { value throws(UsageError) -> Int in
                guard let number = Int(value), number > 0 else { throw UsageError("--count must be a positive number") }
                return number
            } ?? 1000
            let rate = try parsed.options["--rate"].map { value throws(UsageError) -> Double in
                guard let number = Double(value), number > 0 else { throw UsageError("--rate must be a positive number") }
                return number
            }
            guard let mix = LoadGenerator.Mix.parse(parsed.options["--mix"] ?? "realistic") else {
                throw UsageError("--mix is realistic, valid, or kind=weight,…")
            }

            let (factory, created) = try LoadFixture.openOrCreate(fixtureDirectory, seed: seed)
            if created {
                FileHandle.standardError.write(Data("veridoc-dev loadgen: new tenant fixture in \(fixtureDirectory.path); configure the worker with its config.json tenants\n".utf8))
            }
            var generator = LoadGenerator(factory: factory, mix: mix, seed: seed)
            let producer = try RateLimitedProducer(bootstrap: bootstrap, rate: rate)
            let started = Date()
            for index in 0..<count {
                // Keep event times fresh during long runs.
                if index % 500 == 0 { generator.factory.now = Date() }
                producer.send(topic: topic, record: try generator.next())
            }
            producer.flush()
            producer.close()
            let seconds = Date().timeIntervalSince(started)
            print(String(format: "produced %d events to %@ in %.1f s (%.0f/s), %d failed", count, topic, seconds, Double(count) / seconds, producer.failed))
            return producer.failed == 0 ? 0 : 1
        }
    }
}
