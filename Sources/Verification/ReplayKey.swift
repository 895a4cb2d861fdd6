import Foundation
import Settings

/// The deployment's shared secret (`replay.nonceKeyFile`): the workers key
/// single-use nonce records with it, and `veridoc serve` and the workers
/// derive the issued-nonce key from it (`IssuedNonce.Key`). Read here, once,
/// for both commands.
public enum ReplayKey {
    /// What a command that cannot run without the key says when the file names none.
    public static let missing = ConfigError("replay.nonceKeyFile: required (a file with at least 32 random bytes, base64 or raw, shared by all workers)")

    /// The key bytes, at least 32, by the rule for secrets (`KeyFile.secret`).
    public static func load(_ settings: VeridocSettings) throws(ConfigError) -> [UInt8] {
        guard let keyFile = settings.replay.nonceKeyFile, !keyFile.isEmpty else { throw missing }
        return try KeyFile.secret(settings.resolve(keyFile), setting: "replay.nonceKeyFile", length: 32...)
    }

    /// The key where the file names one (an empty name is refused as by
    /// `load`); nil where it names none.
    public static func loadIfNamed(_ settings: VeridocSettings) throws(ConfigError) -> [UInt8]? {
        settings.replay.nonceKeyFile == nil ? nil : try load(settings)
    }
}
