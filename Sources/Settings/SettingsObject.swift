import JSON

/// One JSON object of the config file, read strictly: each setting is taken
/// by name and type, and `finish` refuses every member nobody took, so a
/// misspelt setting is an error instead of a silent default.
public struct SettingsObject {
    /// The dotted path of this object ("kafka", "tenants[0]"), for messages.
    public let path: String
    let object: JSONObject
    private var taken: [String] = []

    public init(_ value: JSONValue, path: String) throws(ConfigError) {
        guard let object = value.objectValue else { throw ConfigError("\(path): an object is required") }
        self.path = path
        self.object = object
    }

    /// `path.key`, for messages.
    public func setting(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The member, marked as read; a JSON null is a value like any other
    /// (and the wrong type for every setting).
    public mutating func value(_ key: String) -> JSONValue? {
        taken.append(key)
        return object[key]
    }

    public mutating func string(_ key: String) throws(ConfigError) -> String? {
        guard let value = value(key) else { return nil }
        guard let text = value.stringValue else { throw ConfigError("\(setting(key)): a string is required") }
        return text
    }

    public mutating func nonEmptyString(_ key: String) throws(ConfigError) -> String? {
        guard let text = try string(key) else { return nil }
        guard !text.isEmpty else { throw ConfigError("\(setting(key)): a non-empty string is required") }
        return text
    }

    public mutating func integer(_ key: String, range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let number = value.integerValue.flatMap({ Int(exactly: $0) }) else { throw ConfigError("\(setting(key)): a whole number is required") }
        guard range.contains(number) else { throw ConfigError("\(setting(key)): \(number) is outside \(range.lowerBound)…\(range.upperBound)") }
        return number
    }

    public mutating func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let flag = value.boolValue else { throw ConfigError("\(setting(key)): true or false is required") }
        return flag
    }

    public mutating func object(_ key: String) throws(ConfigError) -> SettingsObject? {
        guard let value = value(key) else { return nil }
        return try SettingsObject(value, path: setting(key))
    }

    public mutating func array(_ key: String) throws(ConfigError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard let list = value.arrayValue else { throw ConfigError("\(setting(key)): an array is required") }
        return list
    }

    /// An array of non-empty strings; empty when absent.
    public mutating func strings(_ key: String) throws(ConfigError) -> [String] {
        guard let list = try array(key) else { return [] }
        return try list.map { item throws(ConfigError) -> String in
            guard let text = item.stringValue, !text.isEmpty else { throw ConfigError("\(setting(key)): an array of non-empty strings is required") }
            return text
        }
    }

    /// One non-empty string, or a non-empty array of at most `maxCount`
    /// distinct ones (a file that may become several during a rotation);
    /// empty when absent.
    public mutating func stringOrStrings(_ key: String, maxCount: Int) throws(ConfigError) -> [String] {
        guard let value = object[key] else {
            taken.append(key)
            return []
        }
        guard value.arrayValue != nil else { return try nonEmptyString(key).map { [$0] } ?? [] }
        let list = try strings(key)
        guard (1...maxCount).contains(list.count), Set(list).count == list.count else {
            throw ConfigError("\(setting(key)): one file, or an array of 1 to \(maxCount) distinct files")
        }
        return list
    }

    /// Each element of an array of objects, read by `body` and finished.
    public mutating func objects<T>(_ key: String, _ body: (inout SettingsObject) throws(ConfigError) -> T) throws(ConfigError) -> [T]? {
        guard let list = try array(key) else { return nil }
        var read: [T] = []
        for (index, item) in list.enumerated() {
            var element = try SettingsObject(item, path: "\(setting(key))[\(index)]")
            read.append(try body(&element))
            try element.finish()
        }
        return read
    }

    /// One object, or a non-empty array of at most `maxCount` of them (a
    /// setting that may hold several, such as signers during a rotation),
    /// each read by `body` and finished; nil when absent.
    public mutating func objectOrObjects<T>(_ key: String, maxCount: Int,
                                            _ body: (inout SettingsObject) throws(ConfigError) -> T) throws(ConfigError) -> [T]? {
        guard let value = object[key] else {
            taken.append(key)
            return nil
        }
        guard value.arrayValue != nil else {
            guard var single = try self.object(key) else { return nil }
            let read = try body(&single)
            try single.finish()
            return [read]
        }
        guard let read = try objects(key, body), (1...maxCount).contains(read.count) else {
            throw ConfigError("\(setting(key)): one object, or an array of 1 to \(maxCount) of them")
        }
        return read
    }

    /// The members read so far, present or not, in the order they were asked for.
    public var takenKeys: [String] { taken }

    /// Refuses the first member (in document order) that no setting took.
    public func finish() throws(ConfigError) {
        let known = Set(taken.map { Array($0.utf8) })
        if let unknown = object.keys.first(where: { !known.contains(Array($0.utf8)) }) {
            throw ConfigError("\(setting(unknown)): unknown setting")
        }
    }
}
