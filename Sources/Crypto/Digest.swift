import COpenSSL

/// The SHA-2 hashes used by COSE (ES256/384/512, HMAC 256/384/512) and by
/// ISO 18013-5 value digests, named as the MSO `digestAlgorithm` names them.
public enum HashAlgorithm: String, Sendable, CaseIterable {
    case sha256 = "SHA-256"
    case sha384 = "SHA-384"
    case sha512 = "SHA-512"

    public var byteCount: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    public func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        var written: UInt32 = 0
        let ok = withContiguousBytes(data) { bytes, count in
            EVP_Digest(bytes, count, &out, &written, evpMD, nil)
        }
        // EVP_Digest only fails on allocation failure or a broken provider;
        // returning a wrong digest would silently break every check above us.
        guard ok == 1, Int(written) == byteCount else {
            fatalError("EVP_Digest failed: \(lastOpenSSLError())")
        }
        return out
    }

    /// The shim's name for the hash (its output length in bits).
    var bits: Int32 {
        switch self {
        case .sha256: 256
        case .sha384: 384
        case .sha512: 512
        }
    }

    var evpMD: OpaquePointer {
        switch self {
        case .sha256: Algorithms.sha256.pointer
        case .sha384: Algorithms.sha384.pointer
        case .sha512: Algorithms.sha512.pointer
        }
    }
}

/// SHA-256, the hash behind most mdoc digests and transcript hashes.
public func sha256(_ data: some Collection<UInt8>) -> [UInt8] {
    HashAlgorithm.sha256.hash(data)
}
