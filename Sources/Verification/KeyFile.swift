import Foundation
import Crypto
import Settings

/// The permission rule for secret key files (merchant private keys, the nonce
/// key, retention data keys): a file others can read is refused, and so is a
/// file its group can read unless that group is one of this process's own
/// groups (the Helm chart mounts secrets 0440 with the worker's fsGroup).
/// The mode is that of the file a symlink points to (Kubernetes secret
/// volumes are symlinks).
public enum KeyFile {
    /// nil when the file may hold a secret; otherwise why not, for the operator.
    /// `groups`: the groups this process is in (the rule's only input that
    /// is not the file's own), given by tests that judge a foreign group
    /// without needing root to make one.
    public static func permissionProblem(_ url: URL, groups: Set<gid_t>? = nil) -> String? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }  // unreadable files fail later with their own message
        let mode = Int(info.st_mode) & 0o777
        let octal = String(mode, radix: 8)
        if mode & 0o007 != 0 {
            return "\(url.path) is readable by other users (mode \(octal)); chmod 600 it"
        }
        if mode & 0o070 != 0 && !(groups ?? processGroups()).contains(info.st_gid) {
            return "\(url.path) is readable by group \(info.st_gid), which this process does not belong to (mode \(octal)); chmod 600 it"
        }
        return nil
    }

    static func processGroups() -> Set<gid_t> {
        var groups = Set([getegid(), getgid()])
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let filled = getgroups(count, &list)
            if filled > 0 { groups.formUnion(list.prefix(Int(filled))) }
        }
        return groups
    }
}

/// The one reader of every file the config names (private keys, secrets,
/// certificates, public keys, VICALs), under one rule: the file must exist and
/// be readable, is read up to `maxBytes` (a wrong path to a device or a log
/// cannot take the process's memory), and a file holding a secret must pass
/// `permissionProblem` first. Errors name the setting and the path, never what
/// the file holds.
extension KeyFile {
    /// What a file holds, which decides whether the permission rule applies.
    public enum Content: Sendable {
        /// A private key or a shared secret: its owner (or this process's group) only.
        case secret
        /// Certificates, public keys, VICALs: anyone may read them.
        case published
    }

    /// The largest file read: a VICAL of every IACA in the world is a few MB.
    public static let maxBytes = 16 << 20

    /// The file's bytes.
    public static func read(_ url: URL, setting: String, _ content: Content) throws(ConfigError) -> [UInt8] {
        try check(url, setting: setting, content)
        guard let handle = FileHandle(forReadingAtPath: url.path), let data = try? handle.read(upToCount: maxBytes + 1) ?? Data() else {
            throw ConfigError("\(setting): cannot read \(url.path)")
        }
        try? handle.close()
        guard data.count <= maxBytes else { throw ConfigError("\(setting): \(url.path) is larger than \(maxBytes >> 20) MB") }
        return Array(data)
    }

    /// A shared secret (the nonce key, a data key), decoded by the one rule
    /// for secrets: the file's text with surrounding ASCII whitespace removed,
    /// if that is base64 (standard alphabet, padded); otherwise the file's
    /// bytes as they are. `length` is how many key bytes the secret needs.
    public static func secret(_ url: URL, setting: String, length: PartialRangeFrom<Int>) throws(ConfigError) -> [UInt8] {
        let key = decodeSecret(try read(url, setting: setting, .secret))
        guard length.contains(key.count) else { throw ConfigError("\(setting): \(url.path) holds fewer than \(length.lowerBound) key bytes") }
        return key
    }

    /// The same, for a secret of exactly `length` bytes.
    public static func secret(_ url: URL, setting: String, length: Int) throws(ConfigError) -> [UInt8] {
        let key = decodeSecret(try read(url, setting: setting, .secret))
        guard key.count == length else {
            throw ConfigError("\(setting): \(url.path) holds neither \(length) raw bytes nor \(length) bytes in base64")
        }
        return key
    }

    /// A Standard Webhooks signing secret: `whsec_` and the base64 of 24 to
    /// 64 random bytes (`veridoc keys generate-webhook-secret`), surrounding
    /// ASCII whitespace ignored.
    public static func webhookSecret(_ url: URL, setting: String) throws(ConfigError) -> [UInt8] {
        let bytes = try read(url, setting: setting, .secret)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d }
        let prefix = Array("whsec_".utf8)
        let trimmed = bytes.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        guard trimmed.starts(with: prefix), let key = Data(base64Encoded: Data(trimmed.dropFirst(prefix.count))).map(Array.init), (24...64).contains(key.count) else {
            throw ConfigError("\(setting): \(url.path) holds no whsec_ secret of 24 to 64 bytes (veridoc keys generate-webhook-secret makes one)")
        }
        return key
    }

    /// The decoding rule of `secret`, on bytes only (no String holds the key).
    static func decodeSecret(_ bytes: [UInt8]) -> [UInt8] {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return bytes }
        return Data(base64Encoded: Data(bytes[first...last])).map(Array.init) ?? bytes
    }

    /// A PEM private key, read by OpenSSL itself so the key never sits in a
    /// Swift String, after the rule's checks.
    public static func privateKey(_ url: URL, setting: String) throws(ConfigError) -> PrivateKey {
        try check(url, setting: setting, .secret, noun: "private key file ")
        guard let key = try? PrivateKey(pemFile: url) else { throw ConfigError("\(setting): \(url.path) holds no PEM private key") }
        return key
    }

    /// Exists, is readable, within `maxBytes`, and, for a secret, passes the permission rule.
    /// `noun` names a secret in the permission message ("private key file").
    private static func check(_ url: URL, setting: String, _ content: Content, noun: String = "") throws(ConfigError) {
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw ConfigError("\(setting): cannot read \(url.path)") }
        if content == .secret, let problem = permissionProblem(url) { throw ConfigError("\(setting): \(noun)\(problem)") }
        var info = stat()
        if stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) > maxBytes {
            throw ConfigError("\(setting): \(url.path) is larger than \(maxBytes >> 20) MB")
        }
    }
}
