import Foundation

extension BenchReport {
    /// One route under wrk.
    public struct APIRoute: Codable, Sendable {
        public var name: String
        public var requests: Int
        public var requestsPerSecond: Double
        /// Non-2xx answers and socket errors: a row with any is not a measurement of the route.
        public var failures: Int
        public var latencyP50Milliseconds: Double
        public var latencyP99Milliseconds: Double
        /// utime + stime of the serve process over the run.
        public var serveCPUSeconds: Double
        /// Requests over the serve process's CPU seconds: the rate one core would give.
        public var requestsPerCoreSecond: Double
    }

    /// Section 7: the session API under `wrk` (`APIBench`).
    public struct API: Codable, Sendable {
        public var seconds: Int
        public var connections: Int
        public var routes: [APIRoute]

        public func table() -> [String] {
            func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
            var lines = ["## 7. Session API (`veridoc serve` under wrk)", ""]
            lines.append("`wrk -t1 -c\(connections) -d\(seconds)s --latency` on loopback, one route after the other; per core = requests ÷ the serve process's CPU seconds.")
            lines.append("")
            lines.append("| route | requests/s | per core | p50 ms | p99 ms | failures |")
            lines.append("|---|---:|---:|---:|---:|---:|")
            for route in routes {
                lines.append("| \(route.name) | \(f(route.requestsPerSecond, 0)) | \(f(route.requestsPerCoreSecond, 0)) | \(f(route.latencyP50Milliseconds, 2)) | \(f(route.latencyP99Milliseconds, 2)) | \(route.failures) |")
            }
            return lines
        }
    }
}
