/// A configuration problem, naming the setting (never a key's contents).
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
