import Foundation
import HTTPClient

/// The run's webhook receiver: scripts/webhook-receiver, a receiver Veridoc
/// did not write (the standardwebhooks package from PyPI verifies each
/// delivery), in the tools venv's python, on a port of its own that it keeps
/// across the restarts a fault asks for. The faults queue its answers and
/// swap its secrets through its control route; the invariants read its log
/// (one line per request answered, with the body's SHA-256, never the body).
final class ChaosReceiver: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// One request as the receiver answered it.
    struct Request: Sendable {
        let webhookID: String
        /// v1 verified under one of the secrets the receiver held then.
        let verified: Bool
        /// What it answered: a status, `slow:N` (200 after N seconds), `huge`, `429:N`.
        let answer: String
        let bodyDigest: String

        /// Answered 200. The sender may not have got it: a slow answer can come
        /// after it gave up, or a killed sender never reads it; the log cannot
        /// tell, and the sender sends again then.
        var acknowledged: Bool { answer == "200" || answer == "huge" || answer.hasPrefix("slow:") }
    }

    static let endpoint = "chaos"

    let directory: URL
    private let python: URL
    private let script: URL
    private let started: (ChildProcess) -> Void
    private let client = HTTPClient(timeoutSeconds: 10, connectTimeoutSeconds: 2, maxResponseBytes: 1 << 16, addresses: .any,
                                    allowsPlainHTTP: true, userAgent: "veridoc-chaos")

    // Guarded by `lock`.
    private let lock = NSLock()
    private var process: ChildProcess?
    private var port = 0
    private var secrets: [String]
    private var serial = 0

    /// `started`: each process it starts, for the roster that an interruption stops.
    init(repository: URL, work: URL, secrets: [String], started: @escaping (ChildProcess) -> Void) {
        python = repository.appendingPathComponent(".build/tools-venv/bin/python")
        script = repository.appendingPathComponent("scripts/webhook-receiver")
        directory = work.appendingPathComponent("receiver")
        self.secrets = secrets
        self.started = started
    }

    /// Whether the tools venv holds what the receiver needs.
    static func available(repository: URL) -> Bool {
        FileManager.default.isExecutableFile(atPath: repository.appendingPathComponent(".build/tools-venv/bin/python").path)
            && FileManager.default.fileExists(atPath: repository.appendingPathComponent(".build/tools-venv/.standardwebhooks").path)
    }

    var url: String { base + "/hooks" }

    private var base: String {
        lock.lock()
        defer { lock.unlock() }
        return "http://127.0.0.1:\(port)"
    }

    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return process?.isRunning ?? false
    }

    /// Starts it on a free port the first time, on the same port after.
    func start() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        lock.lock()
        serial += 1
        let (name, port, secrets) = ("webhook-receiver-\(serial)", self.port, self.secrets)
        lock.unlock()
        let portFile = directory.appendingPathComponent("port")
        try? FileManager.default.removeItem(at: portFile)
        let child = try ChildProcess(python.path, [script.path, "--log", directory.appendingPathComponent("requests.jsonl").path, "--port-file", portFile.path,
                                                   "--port", String(port), "--digest-bodies",
                                                   "--acknowledgements", directory.appendingPathComponent("acknowledged").path] + secrets.flatMap { ["--secret", $0] },
                                     name: name, output: directory.appendingPathComponent("\(name).log").path)
        started(child)
        // The port file is written once the socket listens.
        let deadline = Date().addingTimeInterval(30)
        var bound: Int?
        while bound == nil, child.isRunning, Date() < deadline {
            bound = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
            if bound == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let bound else {
            child.killNow()
            throw Failure(description: "the webhook receiver did not start (its log: \(directory.appendingPathComponent("\(name).log").path))")
        }
        lock.lock()
        process = child
        self.port = bound
        lock.unlock()
    }

    /// SIGKILL: a receiver that is down refuses connections until `start`.
    func kill() {
        lock.lock()
        let child = process
        lock.unlock()
        child?.killNow()
        _ = child?.wait(timeout: 10)
    }

    /// Appends answers to the queue (each request takes the next, then 200).
    @discardableResult
    func queue(_ answers: [String], clearingFirst: Bool = false) -> Bool {
        control(["answers": answers, "clear": clearingFirst])
    }

    /// The secrets it verifies with from now on (a restart keeps them).
    @discardableResult
    func setSecrets(_ secrets: [String]) -> Bool {
        lock.lock()
        self.secrets = secrets
        lock.unlock()
        return control(["secrets": secrets])
    }

    /// Requests being answered now; nil when it does not answer.
    func inFlight() -> Int? {
        state()?["in_flight"] as? Int
    }

    /// How many requests got `answer` so far (since its last start); nil when it does not answer.
    func answered(_ answer: String) -> Int? {
        (state()?["answered"] as? [String: Int]).map { $0[answer] ?? 0 }
    }

    private func state() -> [String: Any]? {
        guard let response = try? client.send("GET", base + "/state"), response.status == 200 else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    }

    private func control(_ command: [String: Any]) -> Bool {
        guard let body = try? JSONSerialization.data(withJSONObject: command) else { return false }
        let response = try? client.send("POST", base + "/control", headers: [("Content-Type", "application/json")],
                                        body: Array(body))
        return response?.status == 200
    }

    /// The webhook ids the receiver answered 2xx, each written before its
    /// answer was sent: the requests' log is written after, and the harness
    /// SIGKILLs the receiver (receiverDown), which can fall between the two.
    func acknowledgedIDs() -> Set<String> {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("acknowledged"), encoding: .utf8) else { return [] }
        return Set(text.split(separator: "\n").map(String.init))
    }

    /// Every request answered so far, in the order answered (across restarts: one log).
    func requests() -> [Request] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("requests.jsonl"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let id = object["id"] as? String else { return nil }
            return Request(webhookID: id, verified: object["verified"] as? Bool ?? false, answer: object["answer"] as? String ?? "",
                           bodyDigest: object["body_sha256"] as? String ?? "")
        }
    }
}
