import Foundation

/// Polls `condition` every `interval` until it holds or `timeout` passes; the last answer.
public func eventually(_ timeout: TimeInterval, every interval: TimeInterval = 0.2, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return try condition()
}

/// A test's own failure, with a sentence that says what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
