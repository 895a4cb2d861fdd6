import Foundation

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
        var object: [String: String] = fields
        object["time"] = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        object["level"] = level.name
        object["message"] = message
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0a)
        sink(data)
    }
}
