import COpenSSL

/// An OpenSSL algorithm object fetched once for the life of the process.
///
/// OpenSSL 3 resolves the implicit `EVP_sha256()`-style objects against the
/// provider store on every init, which dominates the cost of hashing small
/// inputs; an explicitly fetched object skips that lookup. Fetched algorithm
/// objects are immutable and reference-counted, so sharing them between
/// threads is safe. They are intentionally never freed: they live in
/// process-wide constants.
final class FetchedAlgorithm: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }
}

enum Algorithms {
    static let sha256 = digest("SHA2-256", fallback: EVP_sha256())
    static let sha384 = digest("SHA2-384", fallback: EVP_sha384())
    static let sha512 = digest("SHA2-512", fallback: EVP_sha512())

    static let aes128GCM = cipher("AES-128-GCM", fallback: EVP_aes_128_gcm())
    static let aes256GCM = cipher("AES-256-GCM", fallback: EVP_aes_256_gcm())

    private static func digest(_ name: String, fallback: OpaquePointer?) -> FetchedAlgorithm {
        // The fallback (a static legacy object) only matters if the default
        // provider cannot be queried, in which case nothing else works either.
        guard let fetched = EVP_MD_fetch(nil, name, nil) ?? fallback else {
            fatalError("OpenSSL has no \(name) digest")
        }
        return FetchedAlgorithm(fetched)
    }

    private static func cipher(_ name: String, fallback: OpaquePointer?) -> FetchedAlgorithm {
        guard let fetched = EVP_CIPHER_fetch(nil, name, nil) ?? fallback else {
            fatalError("OpenSSL has no \(name) cipher")
        }
        return FetchedAlgorithm(fetched)
    }
}
