/// Every failure the cryptography layer reports. Cases carry no key material,
/// plaintext or input bytes, only what went wrong, so they are safe to log.
public enum CryptoError: Error, Equatable, Sendable {
    /// Key bytes that do not describe a key (wrong length, bad encoding).
    case invalidKey(String)
    /// An EC point that is not on the named curve (or is the point at infinity).
    case pointNotOnCurve
    /// A curve, algorithm or key type this build does not support.
    case unsupported(String)
    /// Authenticated decryption failed: wrong key, wrong info/aad, or tampered data.
    case authenticationFailed
    /// A PEM or DER structure could not be parsed.
    case malformedEncoding(String)
    /// An input outside the documented bounds (length, counter overflow).
    case invalidInput(String)
    /// OpenSSL failed where it should not; the text is OpenSSL's error string.
    case openSSL(String)
}
