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

    /// The digest of `data`. Computed on OpenSSL's SHA-2 block functions on
    /// the stack: `EVP_Digest` allocated, initialised and freed a provider
    /// context for each of the many small IssuerSignedItems of an event.
    public func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(data) { bytes, count in hash(bytes, count) }
    }

    /// The common argument types without the generic dispatch.
    public func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBufferPointer { hash($0.baseAddress, $0.count) }
    }

    public func hash(_ data: ArraySlice<UInt8>) -> [UInt8] {
        data.withUnsafeBufferPointer { hash($0.baseAddress, $0.count) }
    }

    /// Written on the stack, then copied into the array: creating the array
    /// first (`unsafeUninitializedCapacity:` or `repeating:`) goes through the
    /// standard library's unspecialized allocation, a runtime metadata lookup
    /// that costs more than the copy, for each of the ~30 digests of an
    /// event. A digest is no secret, and the array it ends
    /// up in is not cleansed either, so the stack copy exposes nothing more.
    private func hash(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { digest in
            // SHA-2 on a memory buffer cannot fail; a wrong digest would
            // silently break every check above us, so stop instead.
            guard veridoc_sha2(bits, bytes, count, digest.baseAddress) == 1 else {
                fatalError("SHA-2 failed: \(lastOpenSSLError())")
            }
            return Array(UnsafeBufferPointer(rebasing: digest[..<byteCount]))
        }
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

public func sha256(_ data: [UInt8]) -> [UInt8] {
    HashAlgorithm.sha256.hash(data)
}

public func sha256(_ data: ArraySlice<UInt8>) -> [UInt8] {
    HashAlgorithm.sha256.hash(data)
}
