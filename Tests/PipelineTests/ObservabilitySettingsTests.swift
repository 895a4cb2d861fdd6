import Foundation
import Observability
import Pipeline
import Testing
import TestSupport
import Verification

/// The `observability` config section and the JSON log lines (no services needed).
@Suite struct ObservabilitySettingsTests {
    private func configuration(_ observability: [String: Any]?, environment: [String: String] = [:]) throws -> WorkerConfiguration {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("veridoc-obs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Secret key files must not be readable by others (the worker refuses them).
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("nonce.key").path,
                                           contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedData(), attributes: [.posixPermissions: 0o600])
        var root: [String: Any] = ["kafka": ["bootstrapServers": "localhost:9092"], "replay": ["nonceKeyFile": "nonce.key"]]
        root["observability"] = observability
        let file = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: root).write(to: file)
        return try WorkerConfiguration.load(from: file, environment: environment)
    }

    @Test func defaultsFileAndEnvironment() throws {
        let defaults = try configuration(nil)
        #expect(defaults.httpPort == 9464 && defaults.logLevel == .info)
        let file = try configuration(["port": 0, "logLevel": "debug"])
        #expect(file.httpPort == 0 && file.logLevel == .debug)
        let environment = try configuration(["port": 0, "logLevel": "debug"], environment: ["VERIDOC_HTTP_PORT": "9100", "VERIDOC_LOG_LEVEL": "WARNING"])
        #expect(environment.httpPort == 9100 && environment.logLevel == .warning)
        #expect(throws: ConfigError.self) { try configuration(["port": 70000]) }
        #expect(throws: ConfigError.self) { try configuration(["logLevel": "verbose"]) }
        #expect(throws: ConfigError.self) { try configuration(nil, environment: ["VERIDOC_HTTP_PORT": "http"]) }
    }

    @Test func logLinesAreJSONWithTimeLevelMessage() throws {
        let lines = LogLines()
        let log = Logger(minimum: .info, sink: { lines.append($0) })
        log.debug("not shown", ["a": "1"])
        log.info("partitions assigned", ["partitions": "veridoc.requests[0]"])
        log.warning("quote \" and\nnewline", ["code": "08006"])
        let written = lines.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(written.count == 3 && written.last == "")
        let objects = try written.dropLast().map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: String] }
        #expect(objects.map { $0["message"] } == ["partitions assigned", "quote \" and\nnewline"])
        #expect(objects.map { $0["level"] } == ["info", "warning"])
        #expect(objects.allSatisfy { $0["time"].map { ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate]).count <= $0.count && $0.hasSuffix("Z") } ?? false })
        #expect(objects[1]["code"] == "08006")
    }
}
