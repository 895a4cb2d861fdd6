import COpenSSL

/// `count` bytes from OpenSSL's CSPRNG.
///
/// Non-throwing because callers use these bytes as nonces and keys: a
/// CSPRNG that cannot produce output must stop the process rather than let
/// anyone continue with predictable values.
public func secureRandomBytes(_ count: Int) -> [UInt8] {
    precondition(count >= 0, "negative byte count")
    guard count > 0 else { return [] }
    var out = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        // RAND_bytes takes an Int32 length.
        let chunk = min(count - filled, Int(Int32.max))
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress! + filled, Int32(chunk)) }
        guard ok == 1 else { fatalError("RAND_bytes failed: \(lastOpenSSLError())") }
        filled += chunk
    }
    return out
}

/// The linked libcrypto's version text, e.g. "OpenSSL 3.0.15 3 Sep 2024".
public var openSSLVersionText: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
