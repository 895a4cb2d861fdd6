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
