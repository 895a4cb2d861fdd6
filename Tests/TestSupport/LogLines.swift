import Foundation

/// What a `Logger` sink received, for tests that read log lines.
///
/// Unchecked Sendable: guarded by `lock`.
public final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    public init() {}

    public func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
    public var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Each line as a JSON object (lines that are not one are left out).
    public var objects: [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
