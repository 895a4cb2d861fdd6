import Foundation

/// One `veridoc <command> --config FILE` process, its stderr in a log file
/// next to the config, killed when the value goes.
public final class VeridocProcess {
    public let process = Process()
    public let logFile: URL

    public init(command: String, config: URL, name: String, environment: [String: String] = [:]) throws {
        logFile = config.deletingLastPathComponent().appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.executableURL = Binaries.veridoc
        process.arguments = [command, "--config", config.path]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
    }

    public func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then the exit status (nil if it did not exit in time).
    public func terminate(timeout: TimeInterval = 60) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return process.isRunning ? nil : process.terminationStatus
    }

    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The `port` field of the first log line whose message is `message`
    /// ("observability listening", "session API listening"), once it appears.
    public func port(loggedAs message: String, timeout: TimeInterval = 30) -> Int? {
        var port: Int?
        _ = eventually(timeout, every: 0.05) {
            for line in log.split(separator: "\n") where line.contains(message) {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let text = object["port"] as? String {
                    port = Int(text)
                }
            }
            return port != nil || !process.isRunning
        }
        return port
    }

    deinit { kill() }
}
