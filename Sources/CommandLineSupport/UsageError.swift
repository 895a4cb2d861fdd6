/// A usage problem: printed with the usage text, exit status 2.
public struct UsageError: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}
