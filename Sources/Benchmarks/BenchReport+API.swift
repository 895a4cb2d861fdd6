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

    /// One kind of waiter's answers, each timed from its session's completion commit to its last byte read.
    public struct WaiterAnswers: Codable, Sendable {
        public var held: Int
        /// Waiters that read their session's outcome.
        public var answered: Int
        /// Waiters that read it more than once (a stream that told its end again).
        public var repeated: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
    }

    /// Waiters held (`WaitersBench`): `POST /v1/sessions` under wrk without and
    /// with long polls and event streams held on the same serve, then each
    /// waiter's answer once its session is completed.
    public struct HeldWaiters: Codable, Sendable {
        public var longPolls: Int
        public var eventStreams: Int
        /// wrk with nothing held, before the waiters and after them; with them held.
        public var before: APIRoute
        public var held: APIRoute
        public var after: APIRoute
        /// held ÷ the mean of before and after.
        public var throughputRatio: Double
        /// serve's threads and resident memory with the waiters held.
        public var serveThreads: Int
        public var serveRSSMegabytes: Double
        /// This process's CPU over the held run (the waiters' threads, the mock broker beside them; wrk is a
        /// process of its own), and over the run before (the mock broker alone): what the waiters cost their side.
        public var benchCPUSecondsHeld: Double
        public var benchCPUSecondsBefore: Double
        /// Sessions completed per commit, and commits paced to this many sessions a second.
        public var completionBatch: Int
        public var completionsPerSecond: Double
        public var polls: WaiterAnswers
        public var streams: WaiterAnswers
        /// Both kinds together.
        public var answerP50Milliseconds: Double
        public var answerP99Milliseconds: Double
        public var answerMaxMilliseconds: Double
        /// Waiters that read their outcome exactly once.
        public var answeredOnce: Int
        /// What the waiters met besides: answers other than 200, connections lost, polls whose wait ran out, settled answers not theirs.
        public var refusals: Int
        public var reconnects: Int
        public var askedAgain: Int
        public var wrong: Int

        init(longPolls: Int, eventStreams: Int, before: APIRoute, held: APIRoute, after: APIRoute, serveThreads: Int, serveRSSMegabytes: Double,
             benchCPUSeconds: (before: Double, held: Double), completionBatch: Int, completionsPerSecond: Double, polls: WaiterAnswers, streams: WaiterAnswers, answerP50Milliseconds: Double,
             answerP99Milliseconds: Double, answerMaxMilliseconds: Double, answeredOnce: Int, refusals: Int, reconnects: Int, askedAgain: Int, wrong: Int) {
            self.longPolls = longPolls
            self.eventStreams = eventStreams
            self.before = before
            self.held = held
            self.after = after
            throughputRatio = held.requestsPerSecond / max((before.requestsPerSecond + after.requestsPerSecond) / 2, 1e-9)
            self.serveThreads = serveThreads
            self.serveRSSMegabytes = serveRSSMegabytes
            benchCPUSecondsBefore = benchCPUSeconds.before
            benchCPUSecondsHeld = benchCPUSeconds.held
            self.completionBatch = completionBatch
            self.completionsPerSecond = completionsPerSecond
            self.polls = polls
            self.streams = streams
            self.answerP50Milliseconds = answerP50Milliseconds
            self.answerP99Milliseconds = answerP99Milliseconds
            self.answerMaxMilliseconds = answerMaxMilliseconds
            self.answeredOnce = answeredOnce
            self.refusals = refusals
            self.reconnects = reconnects
            self.askedAgain = askedAgain
            self.wrong = wrong
        }

        /// Held long polls and streams, as the targets name them.
        var label: String { "\(longPolls) long polls + \(eventStreams) event streams held" }

        func table() -> [String] {
            func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
            var lines = ["", "Waiters held: \(longPolls) connections each keeping `GET /v1/sessions/{id}?wait=30` asked and \(eventStreams) each on `GET /v1/sessions/{id}/events`, every one on a session of its own created and given a response through the API (processing), one tenant, serve's caps raised to let them all wait. `POST /v1/sessions` under the same wrk before them, with them held, and after them; then the sessions completed by the worker's statement, \(completionBatch) a commit, \(f(completionsPerSecond, 0)) a second (the commit NOTIFYs serve's listener), and each waiter's answer timed from its commit to its last byte read (the poll's response, the stream's settled event), both on this process's monotonic clock.", ""]
            lines.append("| POST /v1/sessions | requests/s | per core | p50 ms | p99 ms | failures |")
            lines.append("|---|---:|---:|---:|---:|---:|")
            for (name, run) in [("nothing held, before", before), (label, held), ("nothing held, after", after)] {
                lines.append("| \(name) | \(f(run.requestsPerSecond, 0)) | \(f(run.requestsPerCoreSecond, 0)) | \(f(run.latencyP50Milliseconds, 2)) | \(f(run.latencyP99Milliseconds, 2)) | \(run.failures) |")
            }
            lines += ["", "| waiters | held | answered | more than once | p50 ms | p99 ms | max ms |", "|---|---:|---:|---:|---:|---:|---:|"]
            for (name, kind) in [("long polls", polls), ("event streams", streams)] {
                lines.append("| \(name) | \(kind.held) | \(kind.answered) | \(kind.repeated) | \(f(kind.p50Milliseconds, 2)) | \(f(kind.p99Milliseconds, 2)) | \(f(kind.maxMilliseconds, 2)) |")
            }
            lines.append("| **all** | \(polls.held + streams.held) | \(polls.answered + streams.answered) | \(polls.repeated + streams.repeated) | \(f(answerP50Milliseconds, 2)) | \(f(answerP99Milliseconds, 2)) | \(f(answerMaxMilliseconds, 2)) |")
            lines.append("")
            lines.append("Held ÷ without (the mean of before and after): \(f(throughputRatio, 3)); serve meanwhile \(serveThreads) threads, \(f(serveRSSMegabytes, 0)) MB resident; CPU over the held run: serve \(f(held.serveCPUSeconds, 2)) s, the bench process (the waiters' threads, the mock broker) \(f(benchCPUSecondsHeld, 2)) s (\(f(benchCPUSecondsBefore, 2)) s over the run before, nothing held). The waiters met \(refusals) answers other than 200, \(reconnects) connections lost, \(askedAgain) polls whose 30 s ran out (asked again), \(wrong) settled answers not theirs.")
            return lines
        }
    }

    /// Section 7: the session API under `wrk` (`APIBench`).
    public struct API: Codable, Sendable {
        public var seconds: Int
        public var connections: Int
        public var routes: [APIRoute]
        /// nil when the run left it out.
        public var front: HTTPFront?
        /// nil when the run left it out.
        public var waiters: HeldWaiters?

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
            lines += waiters?.table() ?? []
            return lines
        }
    }
}
