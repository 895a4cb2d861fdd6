import CivilDate
import Foundation
import JSON

/// One JSON object per line on stderr: `time` (RFC 3339, UTC, milliseconds),
/// `level`, `message`, then the caller's fields. Event-specific lines carry
/// `event` (the event id), `tenant` (only a configured tenant) and `reason`
/// (reason codes, comma-separated) — see `Logger.eventFields` in Pipeline. Callers pass only
/// non-personal fields (codes, ids, counts, partitions): never element
/// values, nonces, payloads or key material.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        public var name: String { ["debug", "info", "warning", "error"][rawValue] }

        /// `debug`, `info`, `warning` (or `warn`), `error`; any case.
        public init?(name: String) {
            guard let level = ["debug": Level.debug, "info": .info, "warning": .warning, "warn": .warning, "error": .error][name.lowercased()] else { return nil }
            self = level
        }
    }

    public let minimum: Level
    private let sink: @Sendable (Data) -> Void

    /// `sink` receives each line (with its newline); stderr by default.
    public init(minimum: Level = .info, sink: @escaping @Sendable (Data) -> Void = { FileHandle.standardError.write($0) }) {
        self.minimum = minimum
        self.sink = sink
    }

    public func isEnabled(_ level: Level) -> Bool { level >= minimum }

    public func debug(_ message: String, _ fields: [String: String] = [:]) { write(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: String] = [:]) { write(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { write(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { write(.error, message, fields) }

    private func write(_ level: Level, _ message: String, _ fields: [String: String]) {
        guard level >= minimum else { return }
        var object = JSONObject()
        for (name, value) in fields { object[name] = .string(value) }
        object["time"] = .string(Self.timestamp(Date()))
        object["level"] = .string(level.name)
        object["message"] = .string(message)
        // Serve writes a line per request: JSONWriter and the timestamp below
        // cost a fraction of Foundation's serializer and date formatter (ICU).
        var line = JSONValue.object(object).jsonBytes()
        line.append(0x0a)
        sink(Data(line))
    }

    /// RFC 3339 in UTC with milliseconds, `2026-12-07T23:42:43.123Z`.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let days = CivilDate.floorDiv(milliseconds, 86_400_000)
        let ofDay = milliseconds - days * 86_400_000
        let (year, month, day) = CivilDate.civil(fromDays: days)
        func digits(_ value: Int64, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return digits(year, 4) + "-" + digits(month, 2) + "-" + digits(day, 2) + "T" + digits(ofDay / 3_600_000, 2) + ":"
            + digits(ofDay / 60_000 % 60, 2) + ":" + digits(ofDay / 1_000 % 60, 2) + "." + digits(ofDay % 1_000, 3) + "Z"
    }
}
