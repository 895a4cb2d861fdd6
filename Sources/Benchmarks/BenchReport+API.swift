import DemoKit
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

    /// The HTTP front held (`FrontLoad`): another tenant's requests while
    /// slow clients and one tenant's long polls hold connections.
    public struct HTTPFront: Codable, Sendable {
        public var slowClients: Int
        public var longPolls: Int
        /// serve.maxWaitingPollsPerTenant in the run: the polls that wait; the others are 429.
        public var waitingPollsPerTenant: Int
        /// Requests of each kind measured (sessions, then /healthz, in turn).
        public var requests: Int
        public var sessionP50Milliseconds: Double
        public var sessionP99Milliseconds: Double
        public var sessionMaxMilliseconds: Double
        public var healthP50Milliseconds: Double
        public var healthP99Milliseconds: Double
        public var healthMaxMilliseconds: Double
        /// Measured requests not answered 201 (sessions) or 200 (/healthz), or not answered at all.
        public var failures: Int
        /// What the attackers saw while measured: their connections closed by serve, and their polls answered 429 or otherwise.
        public var attackerReconnects: Int
        public var attackerRefusals: Int
        public var attackerAnswers: Int
        public var serveCPUSeconds: Double
    }

    /// Section 7: the session API under `wrk` (`APIBench`).
    public struct API: Codable, Sendable {
        public var seconds: Int
        public var connections: Int
        public var routes: [APIRoute]
        /// nil when the run left it out.
        public var front: HTTPFront?

        public func table() -> [String] {
            func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
            var lines = BenchReport.section("## 7. Session API (`veridoc serve` under wrk)",
                                            about: "`wrk -t1 -c\(connections) -d\(seconds)s --latency` on loopback, one route after the other; per core = requests ÷ the serve process's CPU seconds.",
                                            table: "| route | requests/s | per core | p50 ms | p99 ms | failures |", "|---|---:|---:|---:|---:|---:|")
            for route in routes {
                lines.append("| \(route.name) | \(f(route.requestsPerSecond, 0)) | \(f(route.requestsPerCoreSecond, 0)) | \(f(route.latencyP50Milliseconds, 2)) | \(f(route.latencyP99Milliseconds, 2)) | \(route.failures) |")
            }
            if let front {
                lines.append("")
                lines.append("The HTTP front held: \(front.slowClients) connections sending a header byte a second (slowloris) and \(front.longPolls) connections of one tenant keeping `GET /v1/sessions/{id}?wait=30` asked (\(front.waitingPollsPerTenant) wait, the rest are 429 and ask again after Retry-After), all on 127.0.0.1 (serve's per-address cap raised to stand for many addresses). Meanwhile another tenant's `POST /v1/sessions` and `GET /healthz`, \(front.requests) each, in turn, a pair every 50 ms, a fresh connection each, timed from connect to the last byte.")
                lines.append("")
                lines.append("| request | p50 ms | p99 ms | max ms | failures |")
                lines.append("|---|---:|---:|---:|---:|")
                lines.append("| another tenant's POST /v1/sessions | \(f(front.sessionP50Milliseconds, 2)) | \(f(front.sessionP99Milliseconds, 2)) | \(f(front.sessionMaxMilliseconds, 2)) | \(front.failures) |")
                lines.append("| GET /healthz | \(f(front.healthP50Milliseconds, 2)) | \(f(front.healthP99Milliseconds, 2)) | \(f(front.healthMaxMilliseconds, 2)) | |")
                lines.append("")
                lines.append("Attackers meanwhile: \(front.attackerReconnects) connections closed by serve and opened again, \(front.attackerRefusals) polls answered 429, \(front.attackerAnswers) otherwise; serve's CPU \(f(front.serveCPUSeconds, 2)) s.")
            }
            return lines
        }
    }
}
