import Foundation
import Synchronization
import Testing
@testable import Observability

/// A log line is one JSON object with the caller's fields, `time`, `level`
/// and `message`; its time is what Foundation's RFC 3339 formatter writes.
@Suite struct LoggerTests {
    @Test(arguments: [0.0, 1.0, 59.999, 59.9996, 951_782_400.5, 1_765_151_363.123, 4_102_444_799.999, -1.5, -86_400.001])
    func theTimestampIsFoundationsRFC3339WithMilliseconds(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let expected = ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC")!,
                                                   formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        #expect(Logger.timestamp(date) == expected)
    }

    @Test func aLineIsOneJSONObjectWithTheFieldsSortedByName() throws {
        let lines = Mutex<[Data]>([])
        let logger = Logger(minimum: .info) { line in lines.withLock { $0.append(line) } }
        logger.debug("not written")
        logger.warning("partition stopped", ["partition": "veridoc.requests[3]", "reason": "offset \"gap\"\n"])
        let written = lines.withLock { $0 }
        try #require(written.count == 1)
        let line = String(decoding: written[0], as: UTF8.self)
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: written[0]) as? [String: String])
        #expect(object["message"] == "partition stopped" && object["level"] == "warning")
        #expect(object["partition"] == "veridoc.requests[3]" && object["reason"] == "offset \"gap\"\n")
        #expect(object["time"].map { $0.count == 24 && $0.hasSuffix("Z") } == true)
        let keys = ["level", "message", "partition", "reason", "time"]
        #expect(keys.map { line.range(of: "\"\($0)\":")!.lowerBound } == keys.map { line.range(of: "\"\($0)\":")!.lowerBound }.sorted())
    }
}
