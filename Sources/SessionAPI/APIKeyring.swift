import Crypto
import Foundation

/// Which tenant an API key belongs to. Keys are held only as SHA-256 hashes
/// (the `sha256:<hex>` lines of the config file); a presented key is hashed
/// into the same form and compared with every line in constant time, so neither the answer's timing nor the order
/// of the list says how close a guess came.
public struct APIKeyring: Sendable {
    struct Entry: Sendable {
        let setting: [UInt8]
        let tenant: String
        let index: Int
    }

    private let entries: [Entry]

    /// The longest key accepted: keys are random tokens, far shorter.
    static let maxKeyBytes = 512

    /// `hashes`: tenant id → its `sha256:<hex>` entries (as `TenantSettings` checked them).
    public init(hashes: [String: [String]]) {
        entries = hashes.sorted { $0.key < $1.key }.flatMap { tenant, list in
            // Compared as the setting's text: Settings has checked it is "sha256:" and lowercase hex.
            list.enumerated().map { index, text in Entry(setting: Array(text.utf8), tenant: tenant, index: index) }
        }
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// Who a key belongs to: its tenant, and which of the tenant's keys
    /// (a position, so that a rate limit or a log may tell keys apart
    /// without holding any part of one).
    public struct Caller: Sendable, Equatable {
        public let tenant: String
        public let keyIndex: Int
    }

    /// The caller whose key is in an `Authorization` header value, or nil.
    public func caller(authorization: String?) -> Caller? {
        guard let authorization else { return nil }
        let scheme = "bearer "
        guard authorization.utf8.count > scheme.utf8.count, authorization.prefix(scheme.count).lowercased() == scheme else { return nil }
        let key = Array(authorization.utf8.dropFirst(scheme.utf8.count))
        guard !key.isEmpty, key.count <= Self.maxKeyBytes else { return nil }
        let presented = Self.settingBytes(forKey: key)
        var found: Caller?
        // Every entry is compared, found or not.
        for entry in entries where constantTimeEqual(presented, entry.setting) && found == nil {
            found = Caller(tenant: entry.tenant, keyIndex: entry.index)
        }
        return found
    }

    /// The `sha256:<hex>` form of a key, for the config file.
    public static func setting(forKey key: String) -> String { String(decoding: settingBytes(forKey: Array(key.utf8)), as: UTF8.self) }

    /// Written byte by byte: this runs for every request, and formatting
    /// each digit through `String(format:)` cost more than the rest of one.
    static func settingBytes(forKey key: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out = Array("sha256:".utf8)
        out.reserveCapacity(out.count + 64)
        for byte in sha256(key) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return out
    }
}
