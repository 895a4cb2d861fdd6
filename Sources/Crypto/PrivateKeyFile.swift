import COpenSSL
import Foundation

extension PrivateKey {
    /// A private key read by OpenSSL straight from a PEM file (PKCS#8 or SEC 1):
    /// the key material never passes through Swift strings or arrays.
    public init(pemFile url: URL) throws(CryptoError) {
        guard let bio = BIO_new_file(url.path, "rb") else {
            ERR_clear_error()
            throw .malformedEncoding("cannot open \(url.path)")
        }
        defer { BIO_free(bio) }
        // An encrypted key fails: there is no passphrase to prompt for.
        guard let parsed = veridoc_read_private_key_pem(bio) else {
            ERR_clear_error()
            throw .malformedEncoding("PEM private key")
        }
        try self.init(owned: OwnedPKey(taking: parsed))
    }
}
