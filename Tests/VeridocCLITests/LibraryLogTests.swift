import Foundation
import Testing
import TestSupport

/// Every line a worker writes to stderr is one JSON object, librdkafka's
/// own lines included: a worker whose broker refuses connections logs
/// librdkafka's connection failures through its logger (message
/// `librdkafka`, facility and level mapped), not in librdkafka's
/// `%3|…|FAIL|…` format.
@Suite(.enabled(if: Services.available, Services.skipMessage)) struct LibraryLogTests {
    @Test func librdkafkaSpeaksThroughTheWorkersLogger() throws {
        let setup = try CLI.WorkerSetup()
        defer { setup.remove() }
        let log = setup.folder.appendingPathComponent("worker.log")
        let process = try CLI.start(["run", "--config", setup.config.path], stderrTo: log)
        let found = eventually(30, every: 0.2) { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(#""message":"librdkafka""#) }
        process.terminate()
        process.waitUntilExit()
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(found, "no librdkafka line came through the logger: \(text.suffix(1500))")
        var librdkafka = 0
        for line in text.split(separator: "\n") {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not one JSON object: \(line)")
            guard let object, object["message"] as? String == "librdkafka" else { continue }
            librdkafka += 1
            #expect(["error", "warning", "info", "debug"].contains(object["level"] as? String ?? ""))
            #expect((object["facility"] as? String)?.isEmpty == false && object["text"] is String && object["client"] is String, "\(line)")
        }
        #expect(librdkafka > 0)
        #expect(!text.contains("%3|") && !text.contains("%4|"), "librdkafka's own format never reaches stderr")
    }
}
