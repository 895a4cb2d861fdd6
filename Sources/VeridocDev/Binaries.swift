import CommandLineSupport
import Foundation

/// The two binaries the tooling runs: itself (the mock broker, the hostile
/// row's measuring helper) and the product, `veridoc`, built beside it (the
/// worker it benchmarks, demonstrates and injects faults into).
enum Binaries {
    static var tooling: URL {
        URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .standardizedFileURL
    }

    static func product() throws(UsageError) -> URL {
        let product = tooling.deletingLastPathComponent().appendingPathComponent("veridoc")
        guard FileManager.default.isExecutableFile(atPath: product.path) else {
            throw UsageError("\(product.path) not found: veridoc-dev runs the veridoc built beside it (swift build builds both)")
        }
        return product
    }
}
