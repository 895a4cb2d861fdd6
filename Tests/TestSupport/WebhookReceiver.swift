import Foundation

/// scripts/webhook-receiver in the tools venv's python: a receiver Veridoc
/// did not write, verifying each delivery with the standardwebhooks package
/// (and Ed25519 with cryptography), answering as told, logging each request.
public final class WebhookReceiver {
    public static let python = Binaries.repository.appendingPathComponent(".build/tools-venv/bin/python")
    public static let available = (try? Subprocess.run(python, ["-c", "import standardwebhooks, cryptography"]).status) == 0
    public static let skipMessage = "needs .build/tools-venv/bin/python with standardwebhooks: run through `make test`"

    /// One request as the receiver saw it.
    public struct Request: Sendable {
        public let id: String
        public let timestamp: Int
        public let signature: String
        public let contentType: String
        /// v1 verified by standardwebhooks under one of the receiver's secrets.
        public let verified: Bool
        /// v1a verified under the receiver's public key; nil without one.
        public let verifiedEd25519: Bool?
        public let answer: String
        public let body: String
    }

    /// A new `whsec_` secret (32 random bytes), as text and as the key bytes it decodes to.
    public static func newSecret() -> (text: String, bytes: [UInt8]) {
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        return ("whsec_" + Data(bytes).base64EncodedString(), bytes)
    }

    private let process: Process
    private let directory: URL
    public let url: String

    /// `secrets`: whsec_ values; `answers`: one per request in order, then 200 (see the script).
    public init(secrets: [String], publicKey: String? = nil, answers: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port")
        let process = Process()
        self.process = process
        process.executableURL = Self.python
        process.arguments = [Binaries.repository.appendingPathComponent("scripts/webhook-receiver").path, "--log", directory.appendingPathComponent("log").path,
                             "--port-file", portFile.path, "--answers", answers.joined(separator: ",")]
            + secrets.flatMap { ["--secret", $0] } + (publicKey.map { ["--public-key", $0] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var port: String?
        _ = eventually(60, every: 0.05) {
            port = try? String(contentsOf: portFile, encoding: .utf8)
            return port != nil || !process.isRunning
        }
        guard let port, !port.isEmpty else { throw TestFailure("webhook-receiver did not start") }
        url = "http://127.0.0.1:\(port)/hooks"
    }

    /// Every request so far, in the order answered.
    public func requests() -> [Request] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Request(id: object["id"] as? String ?? "", timestamp: Int(object["timestamp"] as? String ?? "") ?? 0,
                           signature: object["signature"] as? String ?? "", contentType: object["content_type"] as? String ?? "",
                           verified: object["verified"] as? Bool ?? false, verifiedEd25519: object["verified_v1a"] as? Bool,
                           answer: object["answer"] as? String ?? "", body: object["body"] as? String ?? "")
        }
    }

    /// Waits until `condition` holds of the requests (or `timeout`); the requests then.
    public func requests(within timeout: TimeInterval, until condition: ([Request]) -> Bool) -> [Request] {
        var seen: [Request] = []
        _ = eventually(timeout, every: 0.1) {
            seen = requests()
            return condition(seen)
        }
        return seen
    }

    /// Killed outright: it keeps nothing that a clean stop would save (each line is written as it is answered).
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
