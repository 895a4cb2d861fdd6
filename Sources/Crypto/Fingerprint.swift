/// A SHA-256 fingerprint as four words: hashed in one pass, where `[UInt8]`
/// would feed the hasher a byte at a time. The key of the signature caches.
struct Fingerprint: Hashable {
    let words: (UInt64, UInt64, UInt64, UInt64)

    init(_ digest: [UInt8]) {
        precondition(digest.count == 32)
        words = digest.withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
             raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }
    }

    static func == (a: Fingerprint, b: Fingerprint) -> Bool { a.words == b.words }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
