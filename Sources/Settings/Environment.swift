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

    func bool(_ name: String) throws(ConfigError) -> Bool? {
        guard let text = variables[name] else { return nil }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw ConfigError("\(name): true or false is required")
        }
    }
}
