/// `VERIDOC_…` variables, which win over the file's settings.
struct Environment {
    let variables: [String: String]

    subscript(name: String) -> String? { variables[name] }

    func integer(_ name: String, range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let text = variables[name] else { return nil }
        guard let number = Int(text) else { throw ConfigError("\(name): a whole number is required") }
        guard range.contains(number) else { throw ConfigError("\(name): \(number) is outside \(range.lowerBound)…\(range.upperBound)") }
        return number
    }

    /// A whole number that `name` sets over the file's `key`. The file's
    /// value is read and checked even when the variable wins, so a bad one
    /// is refused either way.
    func integer(_ name: String, over key: String, in section: inout SettingsObject?, range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        let fromEnvironment = try integer(name, range: range)
        let fromFile = try section?.integer(key, range: range)
        return fromEnvironment ?? fromFile
    }

    func bool(_ name: String) throws(ConfigError) -> Bool? {
        guard let text = variables[name] else { return nil }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw ConfigError("\(name): true or false is required")
        }
    }
}
