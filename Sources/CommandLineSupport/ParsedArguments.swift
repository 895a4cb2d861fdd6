/// Splits `--name value` options and `--flag`s from positional arguments.
/// Nothing that starts with `-` is ever a value or a path: `--config -x` is
/// a missing value, and a lone `-x` an unknown option (only `-` itself, for
/// standard input, is an argument).
public struct ParsedArguments {
    public var options: [String: String] = [:]
    public var flags: Set<String> = []
    public var positional: [String] = []

    public init(_ arguments: [String], options known: Set<String>, flags knownFlags: Set<String>) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if known.contains(argument) {
                guard index + 1 < arguments.count, !Self.looksLikeOption(arguments[index + 1]) else { throw UsageError("\(argument) needs a value") }
                options[argument] = arguments[index + 1]
                index += 2
            } else if knownFlags.contains(argument) {
                flags.insert(argument)
                index += 1
            } else if Self.looksLikeOption(argument) {
                throw UsageError("unknown option \(argument)")
            } else {
                positional.append(argument)
                index += 1
            }
        }
    }

    /// `-x`, `--x`: an option's spelling, never a value; `-` alone is standard input.
    public static func looksLikeOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-"
    }

    /// `argument` as a path, refused when it is spelt like an option.
    public static func path(_ argument: String) throws(UsageError) -> String {
        guard !looksLikeOption(argument) else { throw UsageError("unknown option \(argument)") }
        return argument
    }

    /// "90s", "15m", "24h", "7d" → seconds; nil for anything else.
    public static func duration(_ text: String) -> Double? {
        guard let unit = text.last, let number = Double(text.dropLast()), number >= 0 else { return nil }
        switch unit {
        case "s": return number
        case "m": return number * 60
        case "h": return number * 3600
        case "d": return number * 86_400
        default: return nil
        }
    }
}
