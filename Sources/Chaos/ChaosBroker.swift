import DemoKit
import Foundation

/// Which broker a chaos run uses.
public enum BrokerKind: String, Sendable, CaseIterable, Codable {
    /// librdkafka's mock cluster in a `veridoc-dev dev-broker` process: three
    /// brokers, a control channel for broker-down and request errors; keeps
    /// about 5 MB a partition.
    case mock
    /// tansu, a Kafka-protocol server of its own: one broker, no control
    /// channel (its faults are done to the process), keeps what it is sent,
    /// in memory only.
    case tansu
}

/// The broker process of a run. Not thread-safe: the supervisor holds its broker lock around every use.
protocol ChaosBroker: AnyObject {
    var kind: BrokerKind { get }
    var bootstrap: String { get }
    var pid: pid_t { get }
    var isRunning: Bool { get }
    /// How it ended ("signal 9"); nil while it runs.
    var ending: String? { get }
    /// A mock control command's answer; nil for a broker without a control channel.
    func command(_ line: String) -> String?
    /// SIGSTOP / SIGCONT: the broker hangs with its connections open.
    func pause()
    func resume()
    /// Clean shutdown, SIGKILL if it does not end in time.
    func stop()
}

/// `veridoc-dev dev-broker` with its stdin/stdout control channel.
final class MockChaosBroker: ChaosBroker {
    let kind = BrokerKind.mock
    let process: ChildProcess
    let bootstrap: String

    init(binary: String, topics: [String], log: String) throws {
        process = try ChildProcess(binary, ["dev-broker", "--brokers", "3", "--parent-pid", "\(getpid())"] + topics.flatMap { ["--topic", "\($0):6"] },
                                   name: "dev-broker", output: log, controlPipes: true)
        guard let line = process.readLine(timeout: 30), line.hasPrefix("BOOTSTRAP=") else {
            process.killNow()
            throw ChildProcess.Failure(description: "dev-broker printed no BOOTSTRAP line")
        }
        bootstrap = String(line.dropFirst("BOOTSTRAP=".count))
    }

    var pid: pid_t { process.pid }
    var isRunning: Bool { process.isRunning }
    var ending: String? { process.ending }

    func command(_ line: String) -> String? {
        guard process.writeLine(line) else { return "(broker gone)" }
        return process.readLine(timeout: 10) ?? "(no answer)"
    }

    func pause() { process.signal(SIGSTOP) }
    func resume() { process.signal(SIGCONT) }

    func stop() {
        guard process.isRunning else { return }
        process.signal(SIGCONT)
        process.signal(SIGTERM)
        if !process.wait(timeout: 10) { process.killNow() }
    }
}

/// tansu on a loopback port of its own, with the run's topics created.
final class TansuChaosBroker: ChaosBroker {
    let kind = BrokerKind.tansu
    let server: TansuServer

    init(binary: String, topics: [String], log: URL) throws {
        server = try TansuServer(binary: binary, log: log, topics: topics.map { ($0, 6) })
    }

    var bootstrap: String { server.bootstrapServers }
    var pid: pid_t { server.pid }
    var isRunning: Bool { server.isRunning }
    var ending: String? { server.isRunning ? nil : (server.ending ?? "ended") }

    func command(_ line: String) -> String? { nil }
    func pause() { server.pause() }
    func resume() { server.resume() }
    func stop() { server.stop() }
}

/// The run's topics, the workers' group, and the client settings every
/// Kafka client of a run shares.
enum ChaosKafka {
    static let requestTopic = "veridoc.requests"
    static let outcomeTopic = "veridoc.outcomes"
    static let deadLetterTopic = "veridoc.requests.dlq"
    static let group = "veridoc"
    /// One Produce request in flight per broker connection, for every producer
    /// under test. librdkafka's mock broker checks idempotent sequence numbers
    /// only for transactional producers, so when an injected error fails batch
    /// A while batch B (later sequence) is already in flight, the mock appends
    /// B, and librdkafka acknowledges A implicitly ("IMPLICITACK … implicitly
    /// acked by subsequent batch success"). That is right against Apache Kafka,
    /// which would refuse B with OUT_OF_ORDER_SEQUENCE_NUMBER unless A was
    /// stored, but against the mock A is lost with a success report. With one
    /// request in flight there is no B. Production keeps librdkafka's default of 5.
    static let maxInFlight = "1"
    /// tansu joins a group in about half of session.timeout.ms (infra.md), and
    /// a rebalance waits for a member that was killed until the rebalance
    /// timeout, which librdkafka takes from max.poll.interval.ms (default
    /// 300 s), so workers would wait minutes for an assignment after a kill.
    static let tansuGroupProperties = ["session.timeout.ms": "2000", "max.poll.interval.ms": "15000"]
}
