import Crypto
import Foundation
import JSON
import Postgres
import Storage

/// Section 7, third part: waiters held. One serve process, its caps raised so
/// that every long poll and event stream may wait (per tenant and in all),
/// each on a session of its own, created and answered through the API so
/// that it waits for its verdict as a client's does. `POST /v1/sessions`
/// under wrk with nothing held, with the waiters held (`WaiterLoad`), and
/// with nothing held again (two baselines: one run of a binary varies by
/// more than the 10 % asked of the ratio). Then the sessions are completed
/// the way the worker completes them (`SessionsTable.complete`, whose commit
/// NOTIFYs serve's listener: the product's one path to a waiter), a batch at
/// a time at a steady rate, and each waiter's answer is timed from its
/// batch's commit on this process's monotonic clock.
struct WaitersBench {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The tenant whose sessions are created (by wrk too) and waited on.
    static let tenant = "bench"
    /// How fast the waiters connect: serve's 8 database connections read each one's session first.
    static let openPerSecond = 2_000.0
    /// Completions as a worker's persister makes them: a batch of sessions in one commit, at a rate a worker keeps up.
    static let completionBatch = 20
    static let completionsPerSecond = 1_000.0

    let binary: String
    let options: APIBench.Options
    let wrk: URL
    let progress: (String) -> Void

    func run(directory: URL, postgres: String, kafka: String, signingKey: String, nonceKey: String) throws -> BenchReport.HeldWaiters {
        // Both ends of every waiter's connection need a descriptor, each in its own process (serve inherits the limit).
        let fitted = fittedToOpenFiles(options.heldPolls, options.heldStreams)
        let (polls, streams) = (fitted.first, fitted.second)
        if fitted.scaled {
            progress("waiters held: the open-file limit is \(fitted.files) (ulimit -Hn): \(polls) long polls and \(streams) event streams instead")
        }
        let held = polls + streams
        let apiKey = "vdk_" + Base64.encodeURL(secureRandomBytes(32))
        // All tenants together wait on at most half of maxConnections; wrk and the session makers need room besides.
        let connections = 2 * (held + 256)
        let config: [String: Any] = [
            "tenants": [APIBench.tenant(Self.tenant, apiKey, signingKey: signingKey)],
            "postgres": ["connectionString": postgres], "kafka": ["bootstrapServers": kafka], "replay": ["nonceKeyFile": nonceKey],
            "serve": ["port": 0, "loopbackOnly": true, "maxConnections": connections, "maxConnectionsPerAddress": connections,
                      "maxWaitingPollsPerTenant": held, "requestsPerSecondPerKey": 1_000_000, "burstPerKey": 10_000_000],
        ]
        let (serve, log, port) = try APIBench.startServe(binary: binary, config: config, directory: directory, prefix: "waiters-")
        defer { APIBench.stop(serve) }
        let metricsPort = try APIBench.listeningPort(log: log, process: serve, message: "observability listening")
        progress("waiters held: \(held) sessions created and given a response through the API …")
        let ids = try SessionMaker(port: port, apiKey: apiKey).processing(held)

        let script = try APIBench.wrkScript(directory: directory, name: "waiters-sessions.lua", body: APIBench.sessionBody, apiKey: apiKey)
        func measure(_ name: String) throws -> BenchReport.APIRoute {
            progress("wrk POST /v1/sessions, \(name), \(options.connections) connections, \(options.seconds) s …")
            return try APIBench.runWrk(wrk, serve: serve, port: port, name: "POST /v1/sessions, \(name)", path: "/v1/sessions", script: script, options: options)
        }
        var ownCPU = ProcessCPU.ownSeconds()
        let before = try measure("nothing held")
        let ownCPUBefore = ProcessCPU.ownSeconds() - ownCPU

        // The streams spread evenly among the polls, so both kinds open throughout.
        let kinds = (0..<held).map { ($0 + 1) * streams / held > $0 * streams / held ? WaiterLoad.Kind.stream : .poll }
        let load = WaiterLoad(port: port, apiKey: apiKey, kinds: kinds, sessions: ids, openPerSecond: Self.openPerSecond)
        load.start()
        var seen: [WaiterLoad.Seen]?
        defer { if seen == nil { _ = load.finish() } }
        progress("waiters held: \(polls) long polls and \(streams) event streams connecting …")
        let settled = Date().addingTimeInterval(60 + Double(held) / Self.openPerSecond)
        while APIBench.gauge("veridoc_api_long_polls_waiting", port: metricsPort) != Double(polls)
                || APIBench.gauge("veridoc_api_event_streams_open", port: metricsPort) != Double(streams) {
            guard Date() < settled, serve.isRunning else {
                throw Failure(description: "the waiters were not all held within 60 s: \(load.counts); serve: \(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(600))")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        // Every waiter has read its session and gone to sleep on its notification.
        Thread.sleep(forTimeInterval: 2)
        let (threads, rss) = Self.threadsAndRSS(pid: serve.processIdentifier)
        ownCPU = ProcessCPU.ownSeconds()
        let heldRun = try measure("\(polls) long polls + \(streams) event streams held")
        ownCPU = ProcessCPU.ownSeconds() - ownCPU

        progress("waiters held: completing the \(held) sessions, \(Self.completionBatch) a commit, \(Int(Self.completionsPerSecond)) a second …")
        let committed = try complete(ids, postgres: postgres)
        // A poll that missed its notification still reads again within serve's re-read interval.
        let answered = ProcessInfo.processInfo.systemUptime + 35
        while load.counts.settled < held, ProcessInfo.processInfo.systemUptime < answered, serve.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        let totals = load.counts
        seen = load.finish()
        let after = try measure("nothing held, after")

        func answers(_ kind: WaiterLoad.Kind) -> BenchReport.WaiterAnswers {
            let mine = kinds.indices.filter { kinds[$0] == kind }
            let milliseconds = mine.compactMap { index in seen![index].answeredAt.map { ($0 - committed[index]) * 1_000 } }
            return BenchReport.WaiterAnswers(held: mine.count, answered: milliseconds.count, repeated: mine.filter { seen![$0].answers > 1 }.count,
                                             p50Milliseconds: APIBench.percentile(milliseconds, 0.5), p99Milliseconds: APIBench.percentile(milliseconds, 0.99),
                                             maxMilliseconds: milliseconds.max() ?? .nan)
        }
        let all = kinds.indices.compactMap { index in seen![index].answeredAt.map { ($0 - committed[index]) * 1_000 } }
        let result = BenchReport.HeldWaiters(
            longPolls: polls, eventStreams: streams, before: before, held: heldRun, after: after, serveThreads: threads, serveRSSMegabytes: rss, benchCPUSeconds: (before: ownCPUBefore, held: ownCPU),
            completionBatch: Self.completionBatch, completionsPerSecond: Self.completionsPerSecond, polls: answers(.poll), streams: answers(.stream),
            answerP50Milliseconds: APIBench.percentile(all, 0.5), answerP99Milliseconds: APIBench.percentile(all, 0.99), answerMaxMilliseconds: all.max() ?? .nan,
            answeredOnce: seen!.filter { $0.answers == 1 }.count, refusals: totals.refusals, reconnects: totals.reconnects, askedAgain: totals.askedAgain,
            wrong: totals.wrong)
        progress("  POST /v1/sessions held ÷ without \(String(format: "%.3f", result.throughputRatio)); answers p99 \(String(format: "%.1f", result.answerP99Milliseconds)) ms, \(result.answeredOnce) of \(held) answered once")
        return result
    }

    /// Completes `ids` in order through the worker's statement; returns, for
    /// each, the instant its commit returned (`systemUptime`, the waiters' clock).
    func complete(_ ids: [String], postgres: String) throws -> [Double] {
        let connection = try PostgresConnection(connectionString: postgres, applicationName: "veridoc-bench")
        defer { connection.close() }
        var committed = [Double](repeating: .nan, count: ids.count)
        var due = ProcessInfo.processInfo.systemUptime
        for start in stride(from: 0, to: ids.count, by: Self.completionBatch) {
            let batch = start..<min(start + Self.completionBatch, ids.count)
            let completions = batch.map { index in
                SessionsTable.Completion(tenant: Self.tenant, id: UUID(uuidString: ids[index])!, status: .verified,
                                         outcome: #"{"type":"veridoc.verification.completed.v1","data":{"verdict":"verified","requestId":"\#(ids[index])"}}"#)
            }
            let done = try connection.execute(SessionsTable.complete(completions)).rowCount
            let at = ProcessInfo.processInfo.systemUptime
            guard done == batch.count else { throw Failure(description: "\(done) of \(batch.count) sessions completed: the rest were not waiting for a verdict") }
            for index in batch { committed[index] = at }
            due += Double(Self.completionBatch) / Self.completionsPerSecond
            if due > at { Thread.sleep(forTimeInterval: due - at) }
        }
        return committed
    }

    /// The process's thread count and resident memory (/proc/PID/status): what serve pays for the waiters held.
    static func threadsAndRSS(pid: Int32) -> (threads: Int, megabytes: Double) {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            text.split(separator: "\n").first { $0.hasPrefix(name) }.flatMap { Double($0.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") } ?? 0
        }
        return (Int(field("Threads:")), field("VmRSS:") / 1_024)
    }
}
