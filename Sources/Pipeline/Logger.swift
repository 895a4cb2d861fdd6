import Foundation

/// One JSON object per line on stderr. Callers pass only non-personal
/// fields (codes, ids, counts, partitions): never element values, nonces,
/// payloads or key material.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        var name: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    public let minimum: Level

    public init(minimum: Level = .info) {
        self.minimum = minimum
    }

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
        FileHandle.standardError.write(data)
    }
}
