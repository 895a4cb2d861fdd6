import COpenSSL

/// Equal bytes, compared in time that depends on the length only: for
/// secrets and their hashes, where an early exit would tell an attacker how
/// many leading bytes they guessed. Different lengths are unequal at once
/// (lengths are not secret here).
public func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard !lhs.isEmpty else { return true }
    return CRYPTO_memcmp(lhs, rhs, lhs.count) == 0
}
