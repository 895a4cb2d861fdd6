import Foundation
import Testing
import TestSupport

/// The product binary is the product: `veridoc` links none of the tooling's
/// modules (the test issuer, embedded PostgreSQL, the mock broker, fault
/// injection, the pool benchmark), and `veridoc-dev` carries them.
@Suite struct ProductBinaryTests {
    /// Swift symbols of a module start with its mangled name: `$s` + length + name.
    static let toolingModules = ["TestIssuer", "DemoKit", "Chaos", "KafkaMock", "VeridocDev"]

    static func symbols(of binary: URL) throws -> String {
        try Subprocess.output(URL(fileURLWithPath: "/usr/bin/nm"), [binary.path])
    }

    static func linked(_ module: String, in symbols: String) -> Bool {
        symbols.contains("$s\(module.utf8.count)\(module)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nm"), "nm (binutils) is not installed"))
    func productLinksNoTooling() throws {
        let product = try Self.symbols(of: Binaries.veridoc)
        let tooling = try Self.symbols(of: Binaries.veridocDev)
        for module in Self.toolingModules {
            #expect(!Self.linked(module, in: product), "veridoc links \(module)")
            #expect(Self.linked(module, in: tooling), "veridoc-dev does not link \(module): the check would see nothing")
        }
        #expect(!product.contains("rd_kafka_mock_"), "veridoc calls librdkafka's mock cluster")
        #expect(!product.contains("PoolBenchmark"))
        // The product's own rooms are in it, so the check reads real symbols.
        #expect(Self.linked("Pipeline", in: product) && Self.linked("Verification", in: product))
    }

    @Test func eachBinaryAnswersItsOwnCommands() throws {
        for command in ["demo", "bench", "loadgen", "chaos", "dev-broker"] {
            let run = try CLI.run([command])
            #expect(run.status == 2 && run.stderr.contains("unknown command \(command)"), "veridoc \(command): \(run.stderr.prefix(200))")
            #expect(try CLI.dev(["help"]).stdout.contains("  \(command)"))
        }
        for command in ["run", "verify", "keys", "migrate", "purge", "forget", "stats", "report"] {
            #expect(try CLI.dev([command]).stderr.contains("unknown command \(command)"))
            #expect(try CLI.run(["help"]).stdout.contains("  \(command)"))
        }
    }
}
