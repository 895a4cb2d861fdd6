import Foundation

/// Bytes read from a child's pipe, handed out a line at a time: the control
/// channels of the broker processes answer in lines.
extension Data {
    /// The first whole line, without its newline, taken off the front; nil
    /// while no newline has arrived.
    package mutating func takeLine() -> String? {
        guard let newline = firstIndex(of: 0x0a) else { return nil }
        let line = String(decoding: self[..<newline], as: UTF8.self)
        removeSubrange(...newline)
        return line
    }
}
