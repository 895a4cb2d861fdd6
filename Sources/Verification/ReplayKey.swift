import Foundation
import Settings

/// The deployment's shared secret (`replay.nonceKeyFile`): the workers key
/// single-use nonce records with it, and `veridoc serve` and the workers
/// derive the issued-nonce key from it (`IssuedNonce.Key`). Read here, once,
/// for both commands.
public enum ReplayKey {
    /// The key bytes: base64 (surrounding whitespace ignored) or raw, at least 32 bytes.
    public static func load(_ settings: VeridocSettings) throws(ConfigError) -> [UInt8] {
        guard let keyFile = settings.replay.nonceKeyFile, !keyFile.isEmpty else {
            throw ConfigError("replay.nonceKeyFile: required (a file with at least 32 random bytes, base64 or raw, shared by all workers)")
        }
        let keyURL = settings.resolve(keyFile)
        if let problem = KeyFile.permissionProblem(keyURL) { throw ConfigError("replay.nonceKeyFile: \(problem)") }
        guard let keyData = try? Data(contentsOf: keyURL) else { throw ConfigError("replay.nonceKeyFile: cannot read \(keyURL.path)") }
        // Bytes only (no String holding the key): base64 with surrounding whitespace, or raw.
        var trimmed = Array(keyData)
        while let last = trimmed.last, last == 0x0a || last == 0x0d || last == 0x20 || last == 0x09 { trimmed.removeLast() }
        while let first = trimmed.first, first == 0x0a || first == 0x0d || first == 0x20 || first == 0x09 { trimmed.removeFirst() }
        let key = Data(base64Encoded: Data(trimmed)).map(Array.init) ?? Array(keyData)
        guard key.count >= 32 else { throw ConfigError("replay.nonceKeyFile: \(keyURL.path) holds fewer than 32 key bytes") }
        return key
    }
}
