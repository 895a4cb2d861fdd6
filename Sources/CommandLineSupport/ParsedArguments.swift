/// Splits `--name value` options and `--flag`s from positional arguments.
public struct ParsedArguments {
    public var options: [String: String] = [:]
    public var flags: Set<String> = []
    public var positional: [String] = []

    public init(_ arguments: [String], options known: Set<String>, flags knownFlags: Set<String>) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if known.contains(argument) {
                guard index + 1 < arguments.count else { throw UsageError("\(argument) needs a value") }
                options[argument] = arguments[index + 1]
                index += 2
            } else if knownFlags.contains(argument) {
                flags.insert(argument)
                index += 1
            } else if argument.hasPrefix("--") {
                throw UsageError("unknown option \(argument)")
            } else {
                positional.append(argument)
                index += 1
            }
        }
    }
}
