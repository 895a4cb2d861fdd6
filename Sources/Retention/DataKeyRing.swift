import Crypto
import Foundation
import Verification

/// What can go wrong with data keys; names files and key ids, never key bytes.
public struct RetentionError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The AES-256 data keys that encrypt stored element values, by id. Several
/// keys let a deployment rotate: new rows use `activeID`, older rows keep the
/// id they were written with until `veridoc keys rotate-data-key` re-encrypts them.
public struct DataKeyRing: Sendable {
    public let activeID: String
    private let keys: [String: [UInt8]]

    public var ids: [String] { keys.keys.sorted() }

    public init(keys: [String: [UInt8]], activeID: String) throws(RetentionError) {
        guard keys[activeID] != nil else { throw RetentionError("retention.activeKey: \(activeID) is not among retention.dataKeys") }
        for (id, key) in keys where key.count != 32 {
            throw RetentionError("data key \(id): an AES-256 key has 32 bytes")
        }
        self.keys = keys
        self.activeID = activeID
    }

    public var activeKey: [UInt8] { keys[activeID]! }

    public func key(_ id: String) -> [UInt8]? { keys[id] }

    /// Reads one key file: exactly 32 bytes, raw or base64 text. A file that
    /// its group or others can read is refused: a readable data key makes
    /// the encryption of every stored value worthless.
    public static func loadKeyFile(_ url: URL, setting: String = "data key file") throws(ConfigError) -> [UInt8] {
        // The shared rule (KeyFile.secret): permissions, size, base64 or raw.
        try KeyFile.secret(url, setting: setting, length: 32)
    }

    /// Writes a new random key as base64, created 0600 so it is never readable by others.
    public static func generateKeyFile(_ url: URL) throws(RetentionError) {
        guard !FileManager.default.fileExists(atPath: url.path) else { throw RetentionError("\(url.path) exists; refusing to overwrite a key") }
        let text = Data(secureRandomBytes(32)).base64EncodedString() + "\n"
        guard FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw RetentionError("cannot write \(url.path)")
        }
    }
}
