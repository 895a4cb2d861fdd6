/// The first few of many findings of one check, named, and the rest counted:
/// constant space however many an input holds.
public struct FindingSummary: Sendable {
    public let limit: Int
    public private(set) var named: [String] = []
    public private(set) var count = 0

    public init(limit: Int = 5) {
        self.limit = limit
    }

    /// Counts a finding; its name is made only while names are still kept.
    public mutating func add(_ name: @autoclosure () -> String) {
        count += 1
        if named.count < limit { named.append(name()) }
    }

    public var isEmpty: Bool { count == 0 }

    /// "a, b, c", or "a, b, c and 17 more".
    public var description: String {
        let listed = named.joined(separator: ", ")
        return count > named.count ? "\(listed) and \(count - named.count) more" : listed
    }
}
