/// A JSON object: members in document (or insertion) order, keys unique.
///
/// Keys are compared by their UTF-8 bytes, not by Swift's `String` equality
/// (which treats canonically equivalent strings as equal, e.g. "K" and the
/// Kelvin sign "\u{212A}"): a lookalike key never answers for the real one.
/// Equality of two objects ignores member order, as JSON does.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public struct Member: Sendable, Equatable {
        public let key: String
        public var value: JSONValue

        public static func == (lhs: Member, rhs: Member) -> Bool {
            JSONKey(lhs.key) == JSONKey(rhs.key) && lhs.value == rhs.value
        }
    }

    public private(set) var members: [Member] = []
    /// Built once an object grows past `indexThreshold`: a linear scan is
    /// faster for the small objects events consist of, and the index keeps a
    /// hostile object with many keys from costing quadratic time.
    private var index: [JSONKey: Int]? = nil
    static let indexThreshold = 12

    public init() {}

    /// Traps on a duplicate key, like `Dictionary(uniqueKeysWithValues:)`.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements {
            precondition(append(key, value), "duplicate key in a JSONObject literal")
        }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// Reading gives the member's value; writing replaces it in place, appends
    /// a new member, or (with nil) removes it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case (let found?, let value?): members[found].value = value
            case (nil, let value?): _ = append(key, value)
            case (let found?, nil):
                members.remove(at: found)
                if index != nil { rebuildIndex() }
            case (nil, nil): break
            }
        }
    }

    /// Adds a member; false (and no change) if the key is already present.
    @discardableResult
    public mutating func append(_ key: String, _ value: JSONValue) -> Bool {
        guard position(of: key) == nil else { return false }
        members.append(Member(key: key, value: value))
        if index != nil {
            index![JSONKey(key)] = members.count - 1
        } else if members.count > Self.indexThreshold {
            rebuildIndex()
        }
        return true
    }

    private func position(of key: String) -> Int? {
        if let index { return index[JSONKey(key)] }
        let wanted = JSONKey(key)
        return members.firstIndex { JSONKey($0.key) == wanted }
    }

    private mutating func rebuildIndex() {
        var built: [JSONKey: Int] = [:]
        built.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { built[JSONKey(member.key)] = position }
        index = built
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }
}

/// A key that hashes and compares by its UTF-8 bytes.
struct JSONKey: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: JSONKey, rhs: JSONKey) -> Bool {
        sameBytes(lhs.text, rhs.text)
    }

    func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// Whether two strings hold the same UTF-8 bytes (no Unicode normalisation).
func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
    guard lhs.utf8.count == rhs.utf8.count else { return false }
    var lhs = lhs
    var rhs = rhs
    return lhs.withUTF8 { left in rhs.withUTF8 { right in left.elementsEqual(right) } }
}
