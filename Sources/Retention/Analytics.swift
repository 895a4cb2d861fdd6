import Foundation

/// Small counts are shown as "<5" (Apple's rule for its own analytics): a
/// cell of 1–4 could point at a person; 0 stays 0.
public enum Suppression {
    public static let threshold = 5

    public static func display(_ count: Int) -> String {
        (1..<threshold).contains(count) ? "<\(threshold)" : String(count)
    }

    public static func isSuppressed(_ count: Int) -> Bool { (1..<threshold).contains(count) }
}

/// "90s", "15m", "24h", "7d" → seconds.
public func parseDuration(_ text: String) -> TimeInterval? {
    guard let unit = text.last, let number = Double(text.dropLast()), number >= 0 else { return nil }
    switch unit {
    case "s": return number
    case "m": return number * 60
    case "h": return number * 3600
    case "d": return number * 86_400
    default: return nil
    }
}
