/// Why a JOSE object (RFC 7515, 7516, 7517) is refused. Details name the
/// member or segment, never its value: these objects carry personal data.
public enum JOSEError: Error, Sendable, Equatable {
    /// Not the shape the specifications define (segments, base64url, JSON, lengths).
    case malformed(String)
    /// Well formed, but an algorithm, member or form Veridoc does not accept.
    case unsupported(String)
    /// The key agreement or the AEAD tag failed: not sealed to this key, or altered.
    case decryptionFailed

    public var detail: String {
        switch self {
        case .malformed(let detail), .unsupported(let detail): detail
        case .decryptionFailed: "the JWE was not encrypted to this key, or was altered (AES-GCM authentication failed)"
        }
    }
}
